// Streams and host functions in stream order.
#include <mutex>
#include <utility>

#include "api.hpp"

using namespace polyhal;

namespace polyhal {

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
        // Lives as long as the process; never in the arena, so no handle can destroy it.
        existing = new halStream_t{device, native, 0, device->pool->addStream(native)};
        device->defaultStream.store(existing, std::memory_order_release);
    }
    *stream = existing;
    return HAL_SUCCESS;
}

halError deferAsynchronousFailure(halError status, Device* device, const halStream_t* stream,
                                  const char* operation) {
    if (__builtin_expect(status != HAL_ERROR_LAUNCH_FAILED, 1)) {
        return checked(status, device, operation);
    }
    device->deferredFailures.defer(
        stream, status,
        takePluginErrorMessage(status, device->backend->name.c_str(), operation));
    return HAL_SUCCESS;
}

halError reportDeferred(std::optional<DeferredFailure> failure, halError status) {
    if (!failure) return status;
    setLastErrorMessage(std::move(failure->message));
    return failure->code;
}

halError synchronizeStream(halStream_t* stream, const char* operation) {
    Device* device = stream->device;
    allocator::DevicePool& pool = *device->pool;
    if (pool.fullyObserved(stream->poolStream)) {
        return deferAsynchronousFailure(device->vtable->streamSynchronize(stream->native), device,
                                        stream, operation);
    }
    const allocator::VectorClock reached = pool.capture(stream->poolStream);
    if (halError e = deferAsynchronousFailure(device->vtable->streamSynchronize(stream->native),
                                              device, stream, operation)) {
        return e;
    }
    pool.synchronized(reached);
    return HAL_SUCCESS;
}

halError synchronizeDevice(Device* device, const char* operation) {
    const allocator::VectorClock reached = device->pool->captureDevice();
    if (halError e = deferAsynchronousFailure(device->vtable->deviceSynchronize(device->native),
                                              device, nullptr, operation)) {
        return e;
    }
    device->pool->synchronized(reached);
    return HAL_SUCCESS;
}

}  // namespace polyhal

extern "C" {

HAL_API halError halCreateStreamWithConfig(halStream* stream, int priority, uint32_t flags) {
    return apiCall([&] {
        if (halError e = requireOutput(stream, "halCreateStream", "stream")) return e;
        if (flags != HAL_STREAM_DEFAULT) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "halCreateStreamWithConfig: unknown flags 0x{:x}", flags);
        }
        Device* device = currentDevice();
        priority = device->clampPriority(priority);
        halPluginStream native = nullptr;
        if (halError e = checked(device->vtable->streamCreate(device->native, priority, flags,
                                                              &native),
                                 device, "halCreateStream")) {
            return e;
        }
        allocator::Stream* poolStream = device->pool->addStream(native);
        halStream_t* object =
            runtime().streams.create(halStream_t{device, native, priority, poolStream});
        if (object == nullptr) {
            device->pool->removeStream(poolStream);
            device->vtable->streamDestroy(native);
            return fail(HAL_ERROR_OUT_OF_MEMORY, "halCreateStream: too many live streams");
        }
        *stream = object;
        return HAL_SUCCESS;
    });
}

HAL_API halError halCreateStream(halStream* stream) {
    return halCreateStreamWithConfig(stream, 0, HAL_STREAM_DEFAULT);
}

HAL_API halError halDestroyStream(halStream handle) {
    return apiCall([&] {
        if (handle == nullptr) {
            return fail(HAL_ERROR_INVALID_HANDLE,
                        "halDestroyStream: NULL is the default stream, which cannot be destroyed");
        }
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, "halDestroyStream")) return e;
        Device* device = stream->device;
        const halPluginStream native = stream->native;
        // Uses by work still queued on the stream stay tracked after it is gone, and its
        // unreported failures stay for the device's reporting calls.
        device->pool->removeStream(stream->poolStream);
        device->deferredFailures.orphan(stream);
        runtime().streams.destroy(stream);
        return checked(device->vtable->streamDestroy(native), device, "halDestroyStream");
    });
}

HAL_API halError halSynchronizeStream(halStream handle) {
    return apiCall([&] {
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, "halSynchronizeStream")) return e;
        const halError status = synchronizeStream(stream, "halSynchronizeStream");
        return reportDeferred(stream->device->deferredFailures.take(stream), status);
    });
}

HAL_API halError halQueryStream(halStream handle) {
    return apiCall([&] {
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, "halQueryStream")) return e;
        Device* device = stream->device;
        allocator::DevicePool& pool = *device->pool;
        const bool observed = pool.fullyObserved(stream->poolStream);
        allocator::VectorClock reached;
        if (!observed) reached = pool.capture(stream->poolStream);
        // A plugin returns a failure before saying whether the stream is idle: set each one
        // aside, then ask again.
        halError status;
        while ((status = device->vtable->streamQuery(stream->native)) == HAL_ERROR_LAUNCH_FAILED) {
            deferAsynchronousFailure(status, device, stream, "halQueryStream");
        }
        status = checked(status, device, "halQueryStream");
        if (status == HAL_SUCCESS && !observed) pool.observeCompleted(reached);
        return reportDeferred(device->deferredFailures.take(stream), status);
    });
}

HAL_API halError halStreamWaitEvent(halStream streamHandle, halEvent eventHandle) {
    return apiCall([&] {
        halStream_t* stream = nullptr;
        halEvent_t* event = nullptr;
        if (halError e = resolveStream(streamHandle, &stream, "halStreamWaitEvent")) return e;
        if (halError e = resolveEvent(eventHandle, &event, "halStreamWaitEvent")) return e;
        if (event->device->backend != stream->device->backend) {
            return fail(HAL_ERROR_NOT_SUPPORTED,
                        "halStreamWaitEvent: the event belongs to the {} backend and the stream "
                        "to the {} backend; synchronize the event on the host instead",
                        event->device->backend->name, stream->device->backend->name);
        }
        const uint64_t record = event->clock.generation();
        if (halError e = checked(stream->device->vtable->streamWaitEvent(stream->native,
                                                                         event->native),
                                 stream->device, "halStreamWaitEvent")) {
            return e;
        }
        event->clock.applyIfCurrent(record, [&](const allocator::VectorClock& awaited) {
            stream->device->pool->streamWaited(stream->poolStream, awaited);
        });
        return HAL_SUCCESS;
    });
}

HAL_API halError halGetStreamPriorityRange(int* least, int* greatest) {
    return apiCall([&] {
        const Device* device = currentDevice();
        if (least != nullptr) *least = device->info.leastStreamPriority;
        if (greatest != nullptr) *greatest = device->info.greatestStreamPriority;
        return HAL_SUCCESS;
    });
}

HAL_API halError halStreamGetNativeHandle(halStream handle, void** native) {
    return apiCall([&] {
        if (halError e = requireOutput(native, "halStreamGetNativeHandle", "native")) return e;
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, "halStreamGetNativeHandle")) return e;
        const auto* vtable = stream->device->vtable;
        if (vtable->streamGetNativeHandle == nullptr) {
            return fail(HAL_ERROR_NOT_SUPPORTED,
                        "halStreamGetNativeHandle: the {} backend has no native stream handles",
                        stream->device->backend->name);
        }
        return checked(vtable->streamGetNativeHandle(stream->native, native), stream->device,
                       "halStreamGetNativeHandle");
    });
}

HAL_API halError halLaunchHostFunc(halStream handle, halHostFn fn, void* userData) {
    return apiCall([&] {
        if (fn == nullptr) {
            return fail(HAL_ERROR_INVALID_VALUE, "halLaunchHostFunc: fn must not be NULL");
        }
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, "halLaunchHostFunc")) return e;
        const auto* vtable = stream->device->vtable;
        if (vtable->launchHostFunc == nullptr) {
            return fail(HAL_ERROR_NOT_SUPPORTED,
                        "halLaunchHostFunc: the {} backend cannot run host functions",
                        stream->device->backend->name);
        }
        if (halError e = checked(launchMarkedHostFunction(*vtable, stream->native, fn, userData),
                                 stream->device, "halLaunchHostFunc")) {
            return e;
        }
        noteSubmitted(stream);
        return HAL_SUCCESS;
    });
}

}  // extern "C"
