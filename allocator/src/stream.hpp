// The pool's state for one stream: its clocks, the pool events recorded on it, the free blocks
// it owns, and its same-stream cache.
#ifndef POLYHAL_ALLOCATOR_STREAM_HPP_
#define POLYHAL_ALLOCATOR_STREAM_HPP_

#include "block.hpp"
#include "ordered_bin.hpp"
#include "size_class_bin.hpp"
#include "stream_cache.hpp"

#include <polyhal/allocator/device_interface.hpp>
#include <polyhal/allocator/vector_clock.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory_resource>
#include <mutex>

namespace polyhal::allocator {

// A pool event recorded on a stream after its operation `ticket`.
struct Marker {
    DeviceEvent event;
    uint64_t ticket;
};

class Stream {
  public:
    Stream(DeviceStream deviceStream, const DevicePool* pool, std::pmr::memory_resource* nodes)
        : device(deviceStream), orderedAfter(pool), largeBin(nodes) {}

    // T: the ticket of the latest operation submitted. Tickets are never reused, not even when
    // the object is reused for a new backend stream, so an old clock entry never claims
    // ordering for newer work.
    std::atomic<uint64_t> submitted{0};
    // C: every operation with a ticket <= completed has finished, as the host has observed.
    // Written with release and read with acquire: seeing C covers seeing the device's writes.
    std::atomic<uint64_t> completed{0};

    // Returns whether `completed` advanced.
    bool observeCompleted(uint64_t ticket) {
        uint64_t current = completed.load(std::memory_order_relaxed);
        while (current < ticket) {
            if (completed.compare_exchange_weak(current, ticket, std::memory_order_release,
                                                std::memory_order_relaxed)) {
                return true;
            }
        }
        return false;
    }
    bool isComplete(uint64_t ticket) const {
        return ticket <= completed.load(std::memory_order_acquire);
    }

    // ---- Guarded by `mutex`. Every change of orderedAfter comes with a new ticket, taken
    // under the same lock, so (submitted, orderedAfter) read under the lock are consistent.
    mutable std::mutex mutex;
    DeviceStream device;
    bool alive = true;
    // VC[s][t] for t != s: operations of t ordered before this stream's next operation.
    VectorClock orderedAfter;
    // Counts changes of orderedAfter: raised under `mutex` after each change (release), so a
    // reader that sees a version it copied orderedAfter at may use its copy without the lock.
    std::atomic<uint64_t> clockVersion{0};
    void orderedAfterChanged() {
        clockVersion.store(clockVersion.load(std::memory_order_relaxed) + 1,
                           std::memory_order_release);
    }
    // Pool events in submission order (tickets increasing), recorded and queried under `mutex`.
    std::deque<Marker> markers;

    // ---- Guarded by the pool lock.
    SizeClassBin smallBin;  // Ready blocks of small segments owned by this stream
    OrderedBin largeBin;    // Ready blocks of large segments owned by this stream
    // Pending blocks owned by this stream, filed under one use (stream, ticket) that is
    // neither ordered before this stream nor observed finished yet.
    std::map<Stream*, std::multimap<uint64_t, Block*>> pending;
    // The clock version and pool completion epoch `pending` was last checked against: while
    // both are unchanged, checking again cannot promote anything.
    uint64_t checkedClockVersion = ~uint64_t{0};
    uint64_t checkedCompletionEpoch = ~uint64_t{0};

    // ---- Guarded by its own lock: the same-stream fast path.
    StreamCache cache;

    bool hasReady() const { return !smallBin.empty() || !largeBin.empty(); }
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_STREAM_HPP_
