// The stream-aware memory pool of one device.
//
// The pool hands out blocks carved from segments it obtains from a DeviceInterface, and decides
// when a freed block may be given to other work by tracking happens-before between streams
// (vector clocks over per-stream submission tickets) and completion observed by the host. It
// never inserts device-side waits. See docs/pool.md for the algorithm and its guarantees.
//
// The core wires it as follows (every hook is thread-safe):
//
//   stream created:     Stream* s = pool.addStream(pluginStream);
//   stream destroyed:   pool.removeStream(s); then the backend's streamDestroy
//   any enqueue on s:   backend call; on success: uint64_t t = pool.submitted(s);
//                       then pool.recordUse(p, s, t) for every pool pointer it touches
//                       (memcpy/memset operands, pointer-sized kernel arguments, halRecordStream)
//   halRecordEvent:     EventClock::Recording r(event.clock); VectorClock c = pool.capture(s);
//                       backend eventRecord; on success: r.commit(c)
//   halStreamWaitEvent: VectorClock c = event.clock.snapshot(); backend streamWaitEvent;
//                       on success: pool.streamWaited(s, c)   (counts as a submission to s)
//   halQueryEvent:      c = event.clock.snapshot(); backend eventQuery;
//                       on HAL_SUCCESS: pool.observeCompleted(c)
//   halSynchronizeEvent: c = event.clock.snapshot(); backend eventSynchronize;
//                       on success: pool.synchronized(c)
//   halSynchronizeStream / halQueryStream:
//                       c = pool.capture(s); backend call; on success: pool.synchronized(c)
//                       (observeCompleted(c) for a query)
//   halSynchronizeDevice: c = pool.captureDevice(); backend call; on success: pool.synchronized(c)
//
// Snapshots are always taken before the backend call and applied after it succeeds: a clock
// may then claim less than the device did, never more.
#ifndef POLYHAL_ALLOCATOR_DEVICE_POOL_HPP_
#define POLYHAL_ALLOCATOR_DEVICE_POOL_HPP_

#include <polyhal/allocator/device_interface.hpp>
#include <polyhal/allocator/pool_stats.hpp>
#include <polyhal/allocator/vector_clock.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace polyhal::allocator {

// A live allocation found by DevicePool::find.
struct Allocation {
    void* base;
    size_t size;  // bytes the caller asked for
};

// The segment behind an exported block (DevicePool::exportBlock): what another process maps.
struct ExportedBlock {
    void* segmentBase;  // as the backend's allocateMemory returned it
    size_t segmentSize;
    size_t offset;  // of the block within the segment
    size_t size;    // bytes the caller asked for
};

class DevicePool {
  public:
    // `device` must outlive the pool.
    explicit DevicePool(DeviceInterface& device);
    // Returns every segment to the backend. The device must be idle.
    ~DevicePool();

    DevicePool(const DevicePool&) = delete;
    DevicePool& operator=(const DevicePool&) = delete;

    // ---- Streams ----
    // Registers a backend stream. The returned object stays valid until the pool is destroyed;
    // after removeStream the core must not pass it again.
    Stream* addStream(DeviceStream stream);
    // Call before the backend destroys the stream. Records a pool event on it so that uses by
    // work still queued there are observed finishing later; returns that record's error (the
    // uses are then held until the device is synchronised).
    halError removeStream(Stream* stream);

    // ---- Submission hooks ----
    // One operation was enqueued on `stream`: returns its ticket. Call after the backend
    // accepted it (so that any ticket a pool event covers is already in the backend's queue).
    uint64_t submitted(Stream* stream);
    // Declares that the operation with `ticket` on `stream` uses the memory at `ptr`. Pointers
    // outside the pool are ignored cheaply. A use of a block that was already freed keeps that
    // block from other streams until the use is ordered or finished.
    void recordUse(const void* ptr, Stream* stream, uint64_t ticket);
    void recordUses(const void* const* ptrs, size_t count, Stream* stream, uint64_t ticket);

    // The clock of `stream`'s next operation (its own ticket included).
    VectorClock capture(Stream* stream) const;
    // As capture(), into `clock`, reusing its storage (no allocation on a hot path).
    void captureInto(Stream* stream, VectorClock* clock) const;
    // Has the host already seen every operation submitted to `stream` finish? Then a query or
    // synchronisation of the stream has nothing to tell the pool, and the core skips capture().
    bool fullyObserved(const Stream* stream) const;
    // The tickets of every live stream: what a device synchronisation covers. With
    // `withRemovedStreams`, those of removed streams too, whose work the synchronisation also
    // waits for (what the race detector must be told; the pool has no use for them).
    VectorClock captureDevice(bool withRemovedStreams = false) const;
    // `stream` now waits for `snapshot`: its clock becomes the elementwise maximum. A snapshot
    // of another pool is ignored.
    void streamWaited(Stream* stream, const VectorClock& snapshot);
    // The host has seen the work described by `snapshot` finish.
    void observeCompleted(const VectorClock& snapshot);
    // As observeCompleted, after a blocking synchronisation; then, above the release
    // threshold, returns finished free segments to the backend and reports the first
    // freeMemory error (the synchronisation itself succeeded).
    halError synchronized(const VectorClock& snapshot);

    // ---- Memory ----
    // A block of at least `size` bytes usable by work submitted to `stream` from now on.
    // Errors: HAL_ERROR_INVALID_VALUE (size 0), HAL_ERROR_OUT_OF_MEMORY (after reclaiming; the
    // message gives requested, in use, reserved, pending and largest free bytes), or a backend
    // error returned by allocateMemory.
    halError allocate(size_t size, Stream* stream, void** ptr);
    // Frees a block in the order of `stream`: later work of `stream` may reuse it at once, other
    // streams once every use is ordered before them or observed finished.
    // Errors: HAL_ERROR_INVALID_VALUE (not a live allocation of this pool: never allocated,
    // interior pointer, or freed already); the pool is left unchanged.
    halError free(void* ptr, Stream* stream);
    // The live allocation containing `ptr`, if any.
    bool find(const void* ptr, Allocation* allocation) const;
    // Where the live block that starts at `ptr` lies in its segment, for another process to map
    // (halIpcGetMemHandle). The segment is treated as any other: it stays while the block is
    // live, and once the block is freed it may be reused or released. False if `ptr` is not the
    // start of a live block.
    bool exportBlock(const void* ptr, ExportedBlock* exported) const;

    // ---- Statistics and control ----
    PoolStats stats() const;
    PoolAttributes attributes() const;
    void setAttributes(const PoolAttributes& attributes);
    // Returns fully free segments whose last use has been observed finished, keeping at least
    // `bytesToKeep` bytes reserved (cudaMemPoolTrimTo). Does not wait for the device; uses
    // observed completion even when reuseObservedCompletion is off.
    // Errors: the first freeMemory failure.
    halError trim(size_t bytesToKeep);
    // Forgets every block, live or free, and returns every segment to the backend. The device
    // must be idle (halResetDevice). Statistics keep counting.
    halError reset();

    class Impl;

  private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_DEVICE_POOL_HPP_
