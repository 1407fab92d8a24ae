// The pool's internals. One mutex (`mutex_`) guards blocks, segments, bins and statistics; it
// is never held across a DeviceInterface call. Each Stream has its own mutex for its clock and
// pool events, and its own cache lock for the same-stream fast path; the lock order is pool
// lock, then one stream lock or one cache lock, never both.
#ifndef POLYHAL_ALLOCATOR_DEVICE_POOL_IMPL_HPP_
#define POLYHAL_ALLOCATOR_DEVICE_POOL_IMPL_HPP_

#include "block.hpp"
#include "block_arena.hpp"
#include "event_pool.hpp"
#include "huge_pages.hpp"
#include "live_index.hpp"
#include "stream.hpp"

#include <polyhal/allocator/device_pool.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <string>
#include <vector>

namespace polyhal::allocator {

class DevicePool::Impl {
  public:
    Impl(const DevicePool* self, DeviceInterface& device);
    ~Impl();

    // Streams and clocks (clocks.cpp).
    Stream* addStream(DeviceStream stream);
    halError removeStream(Stream* stream);
    VectorClock capture(Stream* stream) const;
    void captureInto(Stream* stream, VectorClock* clock) const;
    VectorClock captureDevice(bool withRemovedStreams) const;
    void streamWaited(Stream* stream, const VectorClock& snapshot);
    void observeCompleted(const VectorClock& snapshot);
    halError synchronized(const VectorClock& snapshot);
    // Raises the stream's completed ticket, telling promote() there is something new.
    void noteCompleted(Stream* stream, uint64_t ticket);

    // allocation.cpp
    halError allocate(size_t size, Stream* stream, void** ptr);
    // deallocation.cpp
    halError free(void* ptr, Stream* stream);
    void recordUses(const void* const* ptrs, size_t count, Stream* stream, uint64_t ticket);
    bool find(const void* ptr, Allocation* allocation) const;
    bool exportBlock(const void* ptr, ExportedBlock* exported) const;

    // reclamation.cpp
    PoolStats stats() const;
    PoolAttributes attributes() const;
    void setAttributes(const PoolAttributes& attributes);
    halError trim(size_t bytesToKeep);
    halError reset();

  private:
    // Which kinds of evidence may make a foreign use harmless.
    struct Policy {
        bool proven;
        bool observed;
    };
    struct Candidate {
        Block* block = nullptr;
        ReusePath path = ReusePath::SameStream;
    };
    // The outcome of checking a free block's uses for its owner.
    struct Verdict {
        Use unsatisfied{nullptr, 0};  // the first use neither ordered nor finished
        bool anyForeign = false;
        bool anyProven = false;
        bool anyObserved = false;
    };
    struct Released {
        void* base;
        size_t size;
    };

    Policy policy() const {
        return {attributes_.reuseProvenOrder, attributes_.reuseObservedCompletion};
    }

    // ---- allocation.cpp (pool lock held unless noted)
    // Paths 1-3 with what the host knows now. Appends to `blocked` (if not null) the owners
    // of fitting blocks that only an observed finish of their free would release.
    Candidate findReusable(size_t size, bool small, Stream* stream, Policy policy,
                           std::vector<Use>* blocked);
    Candidate findInOtherStreams(size_t size, bool small, Stream* stream, Policy policy,
                                 std::vector<Use>* blocked);
    // The stream's orderedAfter, copied under the stream's lock only when it changed since the
    // last copy: the allocations of a stream between two of its waits take no stream lock.
    const VectorClock& orderedAfterOf(Stream* stream);
    void* carve(Block* block, size_t rounded, size_t requested, Stream* stream,
                uint64_t PoolStats::*counter);
    Block* addSegment(void* base, size_t size, bool small, Stream* stream);
    // Without the lock: a new segment, or the backend's error.
    halError grow(size_t segmentSize, size_t rounded, size_t requested, bool small, Stream* stream,
                  uint64_t PoolStats::*counter, void** ptr);
    halError allocateAfterOutOfMemory(size_t size, size_t rounded, bool small, Stream* stream,
                                      void** ptr);
    std::string outOfMemoryMessage(size_t size) const;

    // ---- same_stream.cpp: the fast path, under the stream's cache lock alone. Each returns
    // false where the pool must decide (then under its lock). The callers ask the cache's
    // lock-free hints first (mayHoldParked, mayHoldListed), inline: a stream whose sizes vary
    // pays for no call.
    bool allocateParked(size_t rounded, size_t requested, Stream* stream, void** ptr);
    bool park(uintptr_t address, Stream* stream);
    // Pool lock held, the stream's cache listing (mayList): lists a block just carved for
    // `stream` in the stream's cache, where it may be taken back; false where the credit
    // says no (the caller files it in the pool's index).
    bool list(Block* block, Stream* stream);
    // Pool lock held: gives the parked blocks of every stream (or of one) back to the pool as
    // frees at the tickets they were freed at. unparkAll looks only where a park was announced
    // since its last pass, and at nothing while no stream parked (a park racing with this
    // relaxed read leaves the flag set for the next pass).
    void unparkAll(std::vector<Use>* markers) {
        if (anyParked_.load(std::memory_order_relaxed)) unparkAnnounced(markers);
    }
    void unparkAnnounced(std::vector<Use>* markers);
    void unparkStream(Stream* stream, std::vector<Use>* markers);
    void releaseParked(Block* block, Stream* home, std::vector<Use>* markers);
    // Pool lock held: the live block at exactly `address` that a stream's cache lists, taken
    // out of that cache; nullptr if none.
    Block* takeFromCache(uintptr_t address, Stream* freeing);

    // ---- deallocation.cpp (pool lock held)
    Block* lookup(uintptr_t address) const;
    // The common part of every free: `stream` frees `block` after its operation `ticket`.
    void release(Block* block, Stream* stream, uint64_t ticket, std::vector<Use>* markers) {
        block->addUse(stream, ticket);
        block->owner = stream;
        stats_.bytesInUse -= block->size;
        stats_.bytesCached += block->size;
        classify(block, policy(), markers);
    }
    // Files a free block whose owner and uses are set: Ready in the owner's bins, or Pending.
    // Appends to `markers` the foreign uses a pool event should observe.
    void classify(Block* block, Policy policy, std::vector<Use>* markers);
    Verdict evaluate(const Block* block, const VectorClock& ownerClock, Policy policy) const;
    void settle(Block* block, const Verdict& verdict, uint64_t ownerTicket);
    void lateUse(Block* block, Stream* stream, uint64_t ticket, std::vector<Use>* markers);
    // Moves the owner's pending blocks whose uses are now ordered or finished to its bins.
    // Unless `always`, skipped while neither the owner's clock nor any completion changed
    // since the last check.
    void promote(Stream* owner, Policy policy, bool always);
    void promoteAll(Policy policy, bool always);
    void insertReady(Block* block);
    void removeReady(Block* block);

    // ---- coalescing.cpp (pool lock held)
    void coalesceQueued(Policy policy);
    void coalesceAll(Policy policy);
    Block* mergeNeighbours(Block* block, Policy policy);
    bool mergeable(const Block* low, const Block* high, Policy policy) const;
    Block* merge(Block* low, Block* high, Policy policy);
    static bool isComplete(const Block* block);
    static bool reusableByAnyone(const Block* block, Policy policy);

    // ---- reclamation.cpp
    // Without the lock: records a pool event after each use unless one already covers it.
    void ensureMarkers(const std::vector<Use>& uses);
    halError recordMarker(Stream* stream);  // stream->mutex held
    // Without the lock: raises `completed` of every stream from its finished pool events,
    // stopping at the first unfinished one of each stream. Returns whether any advanced.
    bool probeMarkers();
    // Without the lock: waits until everything submitted so far has finished.
    void synchronizeEverything();
    std::vector<Stream*> streamsSnapshot() const;
    // Pool lock held: detaches fully free, finished segments while more than `keep` bytes
    // are reserved.
    std::vector<Released> detachReleasable(size_t keep);
    void detachSegment(Segment* segment);
    // Without the lock.
    halError releaseSegments(const std::vector<Released>& segments);
    void updateAddressRange();

    const DevicePool* self_;
    DeviceInterface& device_;
    EventPool events_;

    mutable std::mutex mutex_;
    HugePageResource hugePages_;  // the upstream of nodes_
    std::pmr::unsynchronized_pool_resource nodes_;
    std::pmr::map<uintptr_t, Block*> blocks_;  // every block, by address
    LiveIndex live_;  // the live blocks no stream's cache lists, by exact address
    std::vector<std::unique_ptr<Segment>> segments_;
    std::vector<std::unique_ptr<Stream>> streams_;
    std::vector<Block*> coalesceQueue_;  // Ready blocks freed since the last coalescing pass
    BlockArena arena_;
    // orderedAfterOf's copy, under the pool lock: scratchStream_'s orderedAfter at its clock
    // version scratchVersion_ (a stream record is never freed while the pool lives, and the
    // reuse of a removed one raises its version).
    VectorClock scratchClock_;
    const Stream* scratchStream_ = nullptr;
    uint64_t scratchVersion_ = 0;
    std::vector<Block*> unparked_;  // unparkStream's scratch list
    PoolStats stats_;
    PoolAttributes attributes_;

    // Bounds of all segments, read without the lock to reject foreign pointers cheaply.
    std::atomic<uintptr_t> lowest_{~uintptr_t{0}};
    std::atomic<uintptr_t> highest_{0};
    std::atomic<size_t> outstandingMarkers_{0};
    // Set by the first park of a stream since unparkAll's last pass, cleared by the pass: a
    // stream parking and taking back in turn writes it once (StreamCache::announce).
    std::atomic<bool> anyParked_{false};
    // Counts advances of any stream's completed ticket.
    std::atomic<uint64_t> completionEpoch_{0};
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_DEVICE_POOL_IMPL_HPP_
