// Stream operations with the pool's bookkeeping: the plugin call and the pool notes together.
#include "stream_ops.hpp"

#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace polyhal {

namespace {

// deferAsynchronousFailure's path for a failure: its message is kept for the reporting calls.
[[gnu::cold, gnu::noinline]] halError deferLaunchFailure(halError status, Device* device,
                                                         const halStream_t* stream,
                                                         const char* operation) {
    std::string message = takePluginErrorMessage(status, device->backend->name.c_str(), operation);
    if (stream != nullptr) trace::streamFailed(stream, message);
    device->deferredFailures.defer(stream, status, std::move(message));
    return HAL_SUCCESS;
}

// The result `status` of a plugin's wait for work of `stream` (nullptr: of the whole device):
// HAL_ERROR_LAUNCH_FAILED is deferred with its message and HAL_SUCCESS returned; other statuses
// are passed through as checked() does.
inline halError deferAsynchronousFailure(halError status, Device* device, const halStream_t* stream,
                                         const char* operation) {
    if (__builtin_expect(status != HAL_ERROR_LAUNCH_FAILED, 1)) {
        return checked(status, device, operation);
    }
    return deferLaunchFailure(status, device, stream, operation);
}

}  // namespace

namespace detail {
void recordUses(halStream_t* stream, const check::Access* accesses, size_t count, uint64_t ticket) {
    // The pool takes the pointers alone; a kernel with more pointer arguments than this is rare.
    constexpr size_t kInline = 16;
    const void* inlinePointers[kInline];
    std::vector<const void*> manyPointers;
    const void** pointers = inlinePointers;
    if (count > kInline) {
        manyPointers.resize(count);
        pointers = manyPointers.data();
    }
    for (size_t i = 0; i < count; ++i) pointers[i] = accesses[i].pointer;
    stream->device->pool->recordUses(pointers, count, stream->poolStream, ticket);
}
}  // namespace detail

halError defaultStream(Device* device, halStream_t** stream) {
    halStream_t* existing = device->defaultStream.load(std::memory_order_acquire);
    if (__builtin_expect(existing != nullptr, 1)) {
        *stream = existing;
        return HAL_SUCCESS;
    }
    std::lock_guard<std::mutex> lock(device->defaultStreamMutex);
    existing = device->defaultStream.load(std::memory_order_relaxed);
    if (existing == nullptr) {
        halPluginStream native = nullptr;
        const halError status =
            device->vtable->streamCreate(device->native, 0, HAL_STREAM_DEFAULT, &native);
        if (status != HAL_SUCCESS) return checked(status, device, "creating the default stream");
        // Lives until halResetDevice; never in the arena, so no handle can destroy it.
        existing = new halStream_t{device, native, 0, device->pool->addStream(native)};
        device->defaultStream.store(existing, std::memory_order_release);
    }
    *stream = existing;
    return HAL_SUCCESS;
}

void releaseDefaultStream(Device* device) {
    halStream_t* stream = device->defaultStream.exchange(nullptr, std::memory_order_acq_rel);
    if (stream == nullptr) return;
    trace::streamDestroyed(stream);
    device->pool->removeStream(stream->poolStream);
    device->vtable->streamDestroy(stream->native);
    delete stream;
}

bool holdOnDevice(halStream_t* stream, Device* other, const void* operand) {
    Device* device = stream->device;
    halStream_t* otherStream = nullptr;
    halPluginEvent copied = nullptr;
    if (defaultStream(other, &otherStream) != HAL_SUCCESS ||
        device->vtable->eventCreate(device->native, HAL_EVENT_DISABLE_TIMING, &copied) !=
            HAL_SUCCESS) {
        return false;
    }
    const bool held = device->vtable->eventRecord(copied, stream->native) == HAL_SUCCESS &&
                      other->vtable->streamWaitEvent(otherStream->native, copied) == HAL_SUCCESS;
    device->vtable->eventDestroy(copied);  // a wait already enqueued on it still holds
    if (held) recordUse(otherStream, operand);
    return held;
}

halError synchronizeStream(halStream_t* stream, const char* operation) {
    Device* device = stream->device;
    return detail::awaitStream(
        stream,
        [&] {
            return deferAsynchronousFailure(device->vtable->streamSynchronize(stream->native),
                                            device, stream, operation);
        },
        [](allocator::DevicePool& pool, const allocator::VectorClock& reached) {
            pool.synchronized(reached);
        });
}

halError settleQueryFailure(halStream_t* stream, halError status, const char* operation) {
    // A plugin returns a failure before saying whether the stream is idle: set it aside, then
    // ask once more, and set a second one aside too. Asking until no failure came would never
    // return where the vendor keeps its failure until a reset (a CUDA context after a trap); the
    // caller reports what was set aside, oldest first.
    Device* device = stream->device;
    for (int asked = 1; status == HAL_ERROR_LAUNCH_FAILED; ++asked) {
        deferAsynchronousFailure(status, device, stream, operation);
        status = asked < 2 ? device->vtable->streamQuery(stream->native) : HAL_ERROR_NOT_READY;
    }
    return checked(status, device, operation);
}

halError synchronizeDevice(Device* device, const char* operation) {
    // The detector must hear of destroyed streams' work too: the synchronisation waited for it.
    const allocator::VectorClock reached =
        device->pool->captureDevice(check::enabled(check::kRaces));
    if (halError e = deferAsynchronousFailure(device->vtable->deviceSynchronize(device->native),
                                              device, nullptr, operation)) {
        return e;
    }
    device->pool->synchronized(reached);
    check::hostObserved(reached);
    return HAL_SUCCESS;
}

halError reportDeferred(std::optional<DeferredFailure> failure, halError status) {
    if (!failure) return status;
    setLastErrorMessage(std::move(failure->message));
    return failure->code;
}

halError createStream(Device* device, int priority, uint32_t flags, const char* operation,
                      halStream_t** stream) {
    halPluginStream native = nullptr;
    // HAL_STREAM_NON_BLOCKING is the core's alone: the plugin's streams never wait implicitly.
    const uint32_t pluginFlags = flags & ~HAL_STREAM_NON_BLOCKING;
    if (halError e =
            checked(device->vtable->streamCreate(device->native, priority, pluginFlags, &native),
                    device, operation)) {
        return e;
    }
    allocator::Stream* poolStream = device->pool->addStream(native);
    halStream_t* object =
        runtime().streams.create(halStream_t{device, native, priority, poolStream, {}, flags});
    if (object == nullptr) {
        device->pool->removeStream(poolStream);
        device->vtable->streamDestroy(native);
        return fail(HAL_ERROR_OUT_OF_MEMORY, "{}: too many live streams", operation);
    }
    registerLegacyStream(object);
    check::created(object, "stream", operation);
    *stream = object;
    return HAL_SUCCESS;
}

halError releaseStream(halStream_t* stream) {
    Device* device = stream->device;
    const halPluginStream native = stream->native;
    trace::streamDestroyed(stream);
    check::destroyed(stream);
    unregisterLegacyStream(stream);
    device->pool->removeStream(stream->poolStream);
    runtime().streams.destroy(stream);
    return device->vtable->streamDestroy(native);
}

halError destroyStream(halStream_t* stream, const char* operation) {
    Device* device = stream->device;
    device->deferredFailures.orphan(stream);
    return checked(releaseStream(stream), device, operation);
}

halError streamWaitEvent(halStream_t* stream, halEvent_t* event, const char* operation) {
    check::awaiting(event, operation);
    const uint64_t record = event->clock.generation();
    return enqueueOnStream(
        stream, operation,
        [&] { return stream->device->vtable->streamWaitEvent(stream->native, event->native); },
        [&] {
            event->clock.applyIfCurrent(record, [&](const allocator::VectorClock& awaited) {
                stream->device->pool->streamWaited(stream->poolStream, awaited);
            });
            trace::eventAwaited(event);
        });
}

halError synchronizeEvent(halEvent_t* event, const char* operation) {
    return detail::awaitEvent(
        event, operation, [&] { return event->device->vtable->eventSynchronize(event->native); },
        [](allocator::DevicePool& pool, const allocator::VectorClock& reached) {
            pool.synchronized(reached);
        });
}

}  // namespace polyhal
