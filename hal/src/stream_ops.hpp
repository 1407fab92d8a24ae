// Every stream operation the memory pool must know of: enqueues, waits and stream lifetimes.
#ifndef POLYHAL_HAL_SRC_STREAM_OPS_HPP_
#define POLYHAL_HAL_SRC_STREAM_OPS_HPP_

#include <array>
#include <cstddef>
#include <optional>

#include "api.hpp"
#include "graph/capture.hpp"
#include "legacy_stream.hpp"

namespace polyhal {

namespace detail {
// Tells the pool of `stream`'s device that the operation `ticket` uses the memory of `accesses`.
void recordUses(halStream_t* stream, const check::Access* accesses, size_t count, uint64_t ticket);
}  // namespace detail

// The pool hands a freed block out again only once it knows the work using it is over, so work
// it is not told of may have its memory reused while it runs. This records that the backend
// accepted one more operation on `stream`, which makes `accesses`; enqueue through submit()
// rather than calling it.
inline uint64_t noteSubmitted(halStream_t* stream, const check::Access* accesses, size_t count) {
    const uint64_t ticket = stream->device->pool->submitted(stream->poolStream);
    if (count > 0) detail::recordUses(stream, accesses, count, ticket);
    return ticket;
}

// The one sequence around a plugin call that enqueues work on `stream`, for every stream
// operation (a command, an event's record or wait, a graph launch): the legacy default stream's
// implicit waits, the trace's timing, `enqueue` (what must precede the plugin call, and the call;
// returns its halError), then, once the backend accepted it, `accepted` (what the pool and the
// race detector learn). A refusal is adopted as checked() does.
template <typename Enqueue, typename Accepted>
halError enqueueOnStream(halStream_t* stream, const char* operation, Enqueue&& enqueue,
                         Accepted&& accepted) {
    if (halError e = legacyBeforeSubmit(stream, operation)) return e;
    trace::Timing* timing = trace::beforeSubmit(stream);
    if (halError e = checked(enqueue(), stream->device, operation)) {
        trace::abandon(timing);
        return e;
    }
    accepted();
    trace::submitted(stream, operation, timing);
    return HAL_SUCCESS;
}

// Enqueues one operation on `stream` through `enqueue` (a plugin call returning its halError)
// and, once the backend has accepted it, tells the pool and the race detector what it touches,
// `accesses`, the operation's one footprint: the pool keeps each access's block from reuse until
// the work is over. Commands get here through submitCommand (command_runner.hpp).
template <typename Enqueue>
halError submit(halStream_t* stream, const char* operation, const check::Access* accesses,
                size_t count, Enqueue&& enqueue) {
    // Work with no captured form (the runner records the rest before it gets here).
    if (__builtin_expect(capturing(stream), 0)) return refuseInCapture(stream, operation);
    return enqueueOnStream(
        stream, operation,
        [&] {
            check::beforeSubmit(stream);
            return enqueue();
        },
        [&] {
            const uint64_t ticket = noteSubmitted(stream, accesses, count);
            check::submitted(stream, operation, accesses, count, ticket);
        });
}

template <typename Enqueue, size_t kCount>
halError submit(halStream_t* stream, const char* operation,
                const std::array<check::Access, kCount>& accesses, Enqueue&& enqueue) {
    return submit(stream, operation, accesses.data(), kCount, enqueue);
}

// A use of `ptr` on `stream` that no plugin call enqueued (halRecordStream): placed after
// everything submitted so far, so any event recorded later covers it.
inline void recordUse(halStream_t* stream, const void* ptr) {
    const uint64_t ticket = stream->device->pool->submitted(stream->poolStream);
    stream->device->pool->recordUses(&ptr, 1, stream->poolStream, ticket);
}

// Makes `other`'s default stream wait for the work just submitted to `stream`, and records the
// use of `operand` there: the pool of `other` cannot see uses on `stream`, a stream of another
// device. Returns false, having done nothing, where the backend refuses a step.
bool holdOnDevice(halStream_t* stream, Device* other, const void* operand);

// Takes a block of `size` bytes from the pool of `stream`'s device, in `stream`'s order, and tells
// the race detector it was allocated by `operation`. With freeBlock, the one place the core's
// allocations and frees meet the pool and the detector.
inline halError allocateBlock(halStream_t* stream, size_t size, const char* operation,
                              void** block) {
    if (halError e = stream->device->pool->allocate(size, stream->poolStream, block)) return e;
    check::allocated(stream->device, *block, size, operation);
    return HAL_SUCCESS;
}

// Returns `block` to its pool in `stream`'s order: handed out again once the work using it is
// over. The race detector notes it freed by `operation`. Returns the pool's result
// (HAL_ERROR_INVALID_VALUE for a pointer that is no live block of that pool).
inline halError freeBlock(halStream_t* stream, void* block, const char* operation) {
    check::freed(stream->device, block, operation);
    return stream->device->pool->free(block, stream->poolStream);
}

// Waits for `stream` and tells the pool what has finished. An asynchronous failure of the
// awaited work is not returned but deferred to the stream's reporting calls (hal.h,
// "Asynchronous failures"); other plugin errors are returned.
halError synchronizeStream(halStream_t* stream, const char* operation);

namespace detail {

// Asks the plugin about `stream` through `wait`; where it succeeds, `finished` tells the pool
// that the work submitted before is over. The pool's clock is captured before asking, as work
// submitted meanwhile is not covered, and not at all where the pool has seen it all finish.
template <typename Wait, typename Finished>
inline halError awaitStream(halStream_t* stream, Wait&& wait, Finished&& finished) {
    allocator::DevicePool& pool = *stream->device->pool;
    // The race detector learns of every wait, even one the pool has nothing to learn from.
    if (!check::enabled(check::kRaces) && pool.fullyObserved(stream->poolStream)) return wait();
    const allocator::VectorClock reached = pool.capture(stream->poolStream);
    const halError status = wait();
    if (status == HAL_SUCCESS) {
        finished(pool, reached);
        check::hostObserved(reached);
    }
    return status;
}

}  // namespace detail

// queryStream's path once the plugin returned HAL_ERROR_LAUNCH_FAILED for `stream`.
halError settleQueryFailure(halStream_t* stream, halError status, const char* operation);

// Asks whether `stream` is idle (HAL_SUCCESS, or HAL_ERROR_NOT_READY) and, when it is, tells the
// pool; failures are deferred as synchronizeStream does. Inline: polling a stream is a hot path.
inline halError queryStream(halStream_t* stream, const char* operation) {
    Device* device = stream->device;
    return detail::awaitStream(
        stream,
        [&] {
            const halError status = device->vtable->streamQuery(stream->native);
            if (__builtin_expect(status == HAL_ERROR_LAUNCH_FAILED, 0)) {
                return settleQueryFailure(stream, status, operation);
            }
            return checked(status, device, operation);
        },
        [](allocator::DevicePool& pool, const allocator::VectorClock& reached) {
            pool.observeCompleted(reached);
        });
}

// Waits for all work of `device`, deferring an asynchronous failure as synchronizeStream does.
halError synchronizeDevice(Device* device, const char* operation);

// Reports `failure` (the thread's error detail becomes its message) if there is one, otherwise
// returns `status`.
halError reportDeferred(std::optional<DeferredFailure> failure, halError status);

// `status`, or the oldest failure `deferred` (its device's) set aside for `stream` where there is
// one (reportDeferred). The common case, nothing set aside, is answered without the lock.
inline halError reportDeferredFor(DeferredFailures& deferred, const halStream_t* stream,
                                  halError status) {
    if (__builtin_expect(deferred.empty(), 1)) return status;
    return reportDeferred(deferred.take(stream), status);
}

// A new stream of `device` with the pool's clock for it, or an error with nothing left behind.
halError createStream(Device* device, int priority, uint32_t flags, const char* operation,
                      halStream_t** stream);

// Destroys `stream` and returns the plugin's result as it is. Uses by work still queued on it
// stay tracked after it is gone.
halError releaseStream(halStream_t* stream);

// Destroys `stream` as releaseStream does; its unreported failures stay for the device's
// reporting calls.
halError destroyStream(halStream_t* stream, const char* operation);

namespace detail {

// Asks the plugin about `event` through `wait`; where it succeeds, `finished` tells the pool,
// once per record, that what the event follows is over.
template <typename Wait, typename Finished>
inline halError awaitEvent(halEvent_t* event, const char* operation, Wait&& wait,
                           Finished&& finished) {
    const uint64_t record = event->clock.generation();
    if (halError e = checked(wait(), event->device, operation)) return e;
    event->clock.completeOnce(record, [&](const allocator::VectorClock& reached) {
        finished(*event->device->pool, reached);
        check::hostObserved(reached);
    });
    return HAL_SUCCESS;
}

}  // namespace detail

// Records `event` on `stream`, with the pool's clock of what it follows. Inline, as queryEvent:
// recording and polling events is the hot path of stream-ordered code.
inline halError recordEvent(halEvent_t* event, halStream_t* stream, const char* operation) {
    // Reused by every record on this thread: capturing allocates nothing in steady state.
    static thread_local allocator::VectorClock captured;
    allocator::EventClock::Recording recording(event->clock);
    return enqueueOnStream(
        stream, operation,
        [&] {
            stream->device->pool->captureInto(stream->poolStream, &captured);
            return stream->device->vtable->eventRecord(event->native, stream->native);
        },
        [&] {
            recording.commit(captured);
            event->recorded.store(true, std::memory_order_release);
            trace::eventRecorded(event);
        });
}

// Makes `stream` wait for `event`; the pool learns that `stream` follows what the event does.
halError streamWaitEvent(halStream_t* stream, halEvent_t* event, const char* operation);

// Asks whether `event` has completed (HAL_SUCCESS, or HAL_ERROR_NOT_READY); when it has, the
// pool learns that what it follows is over.
inline halError queryEvent(halEvent_t* event, const char* operation) {
    return detail::awaitEvent(
        event, operation, [&] { return event->device->vtable->eventQuery(event->native); },
        [](allocator::DevicePool& pool, const allocator::VectorClock& reached) {
            pool.observeCompleted(reached);
        });
}

// Waits for `event`; then the pool learns that what it follows is over.
halError synchronizeEvent(halEvent_t* event, const char* operation);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_STREAM_OPS_HPP_
