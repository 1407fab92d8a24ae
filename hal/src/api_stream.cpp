// Streams and host functions in stream order.
#include "command_runner.hpp"
#include "stream_ops.hpp"

using namespace polyhal;

namespace {

// halCreateStreamWithConfig's work, shared with halCreateStream so that each reports its own name.
halError createStreamHandle(halStream* stream, int priority, uint32_t flags, const char* op) {
    if (halError e = requireOutput(stream, op, "stream")) return e;
    if ((flags & ~HAL_STREAM_NON_BLOCKING) != 0) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: unknown flags 0x{:x}", op,
                    flags & ~HAL_STREAM_NON_BLOCKING);
    }
    Device* device = currentDevice();
    return createStream(device, device->clampPriority(priority), flags, op, stream);
}

}  // namespace

extern "C" {

HAL_API halError halCreateStreamWithConfig(halStream* stream, int priority, uint32_t flags) {
    return apiCall(__func__, CallPolicy::kReachesDevice,
                   [&, op = __func__] { return createStreamHandle(stream, priority, flags, op); });
}

HAL_API halError halCreateStream(halStream* stream) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        return createStreamHandle(stream, 0, HAL_STREAM_DEFAULT, op);
    });
}

HAL_API halError halSetDefaultStreamMode(halDefaultStreamMode mode) {
    return apiCall(__func__, CallPolicy::kReachesDevice,
                   [&, op = __func__] { return setDefaultStreamMode(enumBits(mode), op); });
}

HAL_API halError halGetDefaultStreamMode(halDefaultStreamMode* mode) {
    return hostGetter(__func__, mode, "mode", [] {
        return legacyDefaultStream() ? HAL_DEFAULT_STREAM_LEGACY : HAL_DEFAULT_STREAM_ORDINARY;
    });
}

HAL_API halError halDestroyStream(halStream handle) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (handle == nullptr) {
            return fail(HAL_ERROR_INVALID_HANDLE,
                        "{}: NULL is the default stream, which cannot be destroyed", op);
        }
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, op)) return e;
        if (capturing(stream)) {
            if (halError e = leaveCapture(stream, op)) return e;
        }
        return destroyStream(stream, op);
    });
}

HAL_API halError halSynchronizeStream(halStream handle) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, op)) return e;
        if (capturing(stream)) return refuseInCapture(stream, op);
        const halError status = synchronizeStream(stream, op);
        if (status == HAL_SUCCESS) trace::streamSynchronized(stream);
        return reportDeferredFor(stream->device->deferredFailures, stream, status);
    });
}

HAL_API halError halQueryStream(halStream handle) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, op)) return e;
        if (capturing(stream)) return refuseInCapture(stream, op);
        // A failure set aside earlier is reported before the plugin is asked again, so that
        // a vendor that keeps a failure until a reset cannot make them pile up.
        DeferredFailures& deferred = stream->device->deferredFailures;
        if (!deferred.empty()) {
            if (std::optional<DeferredFailure> failure = deferred.take(stream)) {
                return reportDeferred(std::move(failure), HAL_SUCCESS);
            }
        }
        return reportDeferredFor(deferred, stream, queryStream(stream, op));
    });
}

HAL_API halError halStreamWaitEvent(halStream streamHandle, halEvent eventHandle) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        halStream_t* stream = nullptr;
        halEvent_t* event = nullptr;
        if (halError e = resolveStream(streamHandle, &stream, op)) return e;
        if (halError e = resolveEvent(eventHandle, &event, op)) return e;
        if (event->device->backend != stream->device->backend) {
            return fail(HAL_ERROR_NOT_SUPPORTED,
                        "{}: the event belongs to the {} backend and the stream "
                        "to the {} backend; synchronize the event on the host instead",
                        op, event->device->backend->name, stream->device->backend->name);
        }
        if (capturing(stream) || capturedEvent(event)) return captureWaitEvent(stream, event, op);
        return streamWaitEvent(stream, event, op);
    });
}

HAL_API halError halGetStreamPriorityRange(int* least, int* greatest) {
    return apiCall(__func__, CallPolicy::kHostOnly, [&] {
        int leastPriority = 0;
        int greatestPriority = 0;
        currentDevice()->streamPriorityRange(&leastPriority, &greatestPriority);
        if (least != nullptr) *least = leastPriority;
        if (greatest != nullptr) *greatest = greatestPriority;
        return HAL_SUCCESS;
    });
}

HAL_API halError halStreamGetNativeHandle(halStream handle, void** native) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (halError e = requireOutput(native, op, "native")) return e;
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, op)) return e;
        const auto* vtable = stream->device->vtable;
        if (vtable->streamGetNativeHandle == nullptr) {
            return fail(HAL_ERROR_NOT_SUPPORTED, "{}: the {} backend has no native stream handles",
                        op, stream->device->backend->name);
        }
        return checked(vtable->streamGetNativeHandle(stream->native, native), stream->device, op);
    });
}

HAL_API halError halLaunchHostFunc(halStream handle, halHostFn fn, void* userData) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (fn == nullptr) {
            return fail(HAL_ERROR_INVALID_VALUE, "{}: fn must not be NULL", op);
        }
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, op)) return e;
        const auto* vtable = stream->device->vtable;
        if (vtable->launchHostFunc == nullptr) {
            return fail(HAL_ERROR_NOT_SUPPORTED, "{}: the {} backend cannot run host functions", op,
                        stream->device->backend->name);
        }
        return runCommand(stream, HostFunctionCommand{fn, userData}, op);
    });
}

}  // extern "C"
