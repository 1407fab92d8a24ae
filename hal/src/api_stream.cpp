// Streams and host functions in stream order.
#include "stream_ops.hpp"

using namespace polyhal;

extern "C" {

HAL_API halError halCreateStreamWithConfig(halStream* stream, int priority, uint32_t flags) {
    return apiCall([&] {
        if (halError e = requireOutput(stream, "halCreateStream", "stream")) return e;
        if (flags != HAL_STREAM_DEFAULT) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "halCreateStreamWithConfig: unknown flags 0x{:x}", flags);
        }
        Device* device = currentDevice();
        return createStream(device, device->clampPriority(priority), flags, "halCreateStream",
                            stream);
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
        return destroyStream(stream, "halDestroyStream");
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
        const halError status = queryStream(stream, "halQueryStream");
        return reportDeferred(stream->device->deferredFailures.take(stream), status);
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
        return streamWaitEvent(stream, event, "halStreamWaitEvent");
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
        return submit(stream, "halLaunchHostFunc", {}, [&] {
            return launchMarkedHostFunction(*vtable, stream->native, fn, userData);
        });
    });
}

}  // extern "C"
