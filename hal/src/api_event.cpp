// Events: points in streams.
#include "stream_ops.hpp"

using namespace polyhal;

namespace {

constexpr uint32_t kKnownEventFlags =
    HAL_EVENT_DISABLE_TIMING | HAL_EVENT_BLOCKING_SYNC | HAL_EVENT_INTERPROCESS;

// halCreateEventWithFlag's work, shared with halCreateEvent so that each reports its own name.
halError createEventHandle(halEvent* event, uint32_t flags, const char* op) {
    if (halError e = requireOutput(event, op, "event")) return e;
    if ((flags & ~kKnownEventFlags) != 0) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: unknown flags 0x{:x}", op,
                    flags & ~kKnownEventFlags);
    }
    Device* device = currentDevice();
    if ((flags & HAL_EVENT_INTERPROCESS) != 0) {
        if ((flags & HAL_EVENT_DISABLE_TIMING) == 0) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "{}: HAL_EVENT_INTERPROCESS needs HAL_EVENT_DISABLE_TIMING", op);
        }
        if (!device->supports(HAL_DEVICE_CAP_IPC_EVENTS)) {
            return fail(HAL_ERROR_NOT_SUPPORTED,
                        "{}: the {} backend (device {}) cannot share events between processes "
                        "(HAL_EVENT_INTERPROCESS)",
                        op, device->backend->name, device->ordinal);
        }
    }
    halPluginEvent native = nullptr;
    if (halError e =
            checked(device->vtable->eventCreate(device->native, flags, &native), device, op)) {
        return e;
    }
    return makeEventHandle(device, native, flags, op, event);
}

}  // namespace

namespace polyhal {

halError makeEventHandle(Device* device, halPluginEvent native, uint32_t flags,
                         const char* operation, halEvent* event) {
    halEvent_t* object = runtime().events.create();
    if (object == nullptr) {
        device->vtable->eventDestroy(native);
        return fail(HAL_ERROR_OUT_OF_MEMORY, "{}: too many live events", operation);
    }
    object->device = device;
    object->native = native;
    object->flags = flags;
    check::created(object, "event", operation);
    *event = object;
    return HAL_SUCCESS;
}

}  // namespace polyhal

extern "C" {

HAL_API halError halCreateEventWithFlag(halEvent* event, uint32_t flags) {
    return apiCall(__func__, CallPolicy::kReachesDevice,
                   [&, op = __func__] { return createEventHandle(event, flags, op); });
}

HAL_API halError halCreateEvent(halEvent* event) {
    return apiCall(__func__, CallPolicy::kReachesDevice,
                   [&, op = __func__] { return createEventHandle(event, HAL_EVENT_DEFAULT, op); });
}

HAL_API halError halRecordEvent(halEvent eventHandle, halStream streamHandle) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        halEvent_t* event = nullptr;
        halStream_t* stream = nullptr;
        if (halError e = resolveEvent(eventHandle, &event, op)) return e;
        if (halError e = resolveStream(streamHandle, &stream, op)) return e;
        if (event->device != stream->device) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "{}: the event belongs to device {}, the stream to device {}", op,
                        event->device->ordinal, stream->device->ordinal);
        }
        if (capturing(stream)) return captureRecordEvent(event, stream, op);
        if (capturedEvent(event)) leaveCapture(event);
        return recordEvent(event, stream, op);
    });
}

HAL_API halError halQueryEvent(halEvent handle) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        halEvent_t* event = nullptr;
        if (halError e = resolveEvent(handle, &event, op)) return e;
        if (capturedEvent(event)) return refuseCapturedEvent(event, op);
        trace::notePool(event->device);
        return queryEvent(event, op);
    });
}

HAL_API halError halSynchronizeEvent(halEvent handle) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        halEvent_t* event = nullptr;
        if (halError e = resolveEvent(handle, &event, op)) return e;
        if (capturedEvent(event)) return refuseCapturedEvent(event, op);
        trace::notePool(event->device);
        const halError status = synchronizeEvent(event, op);
        if (status == HAL_SUCCESS) trace::eventAwaited(event);
        return status;
    });
}

HAL_API halError halEventElapsedTime(float* ms, halEvent startHandle, halEvent endHandle) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (halError e = requireOutput(ms, op, "ms")) return e;
        halEvent_t* start = nullptr;
        halEvent_t* end = nullptr;
        if (halError e = resolveEvent(startHandle, &start, op)) return e;
        if (halError e = resolveEvent(endHandle, &end, op)) return e;
        for (halEvent_t* event : {start, end}) {
            if (capturedEvent(event)) return refuseCapturedEvent(event, op);
        }
        if (start->device != end->device) {
            return fail(HAL_ERROR_INVALID_VALUE, "{}: the events belong to devices {} and {}", op,
                        start->device->ordinal, end->device->ordinal);
        }
        const auto* vtable = start->device->vtable;
        if (!start->device->supports(HAL_DEVICE_CAP_TIMING_EVENTS)) {
            return fail(HAL_ERROR_NOT_SUPPORTED, "{}: the {} backend has no timing events", op,
                        start->device->backend->name);
        }
        for (const halEvent_t* event : {start, end}) {
            if ((event->flags & HAL_EVENT_DISABLE_TIMING) != 0) {
                return fail(HAL_ERROR_INVALID_VALUE,
                            "{}: event {} was created with HAL_EVENT_DISABLE_TIMING", op,
                            static_cast<const void*>(event));
            }
            if (!event->recorded.load(std::memory_order_acquire)) {
                return fail(HAL_ERROR_INVALID_VALUE, "{}: event {} was never recorded", op,
                            static_cast<const void*>(event));
            }
        }
        // plugin.h promises the plugin complete events: a timestamp read before the device
        // wrote it is garbage on some drivers.
        for (const halEvent_t* event : {start, end}) {
            const halError status = vtable->eventQuery(event->native);
            if (status == HAL_ERROR_NOT_READY) {
                return fail(HAL_ERROR_NOT_READY, "{}: the {} event has not completed yet", op,
                            event == start ? "start" : "end");
            }
            if (halError e = checked(status, start->device, op)) return e;
        }
        return checked(vtable->eventElapsedTime(ms, start->native, end->native), start->device, op);
    });
}

HAL_API halError halDestroyEvent(halEvent handle) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        halEvent_t* event = nullptr;
        if (halError e = resolveEvent(handle, &event, op)) return e;
        if (capturedEvent(event)) leaveCapture(event);
        Device* device = event->device;
        const halPluginEvent native = event->native;
        trace::eventDestroyed(event);
        check::destroyed(event);
        runtime().events.destroy(event);
        return checked(device->vtable->eventDestroy(native), device, op);
    });
}

}  // extern "C"
