// Events: points in streams.
#include "stream_ops.hpp"

using namespace polyhal;

namespace {

constexpr uint32_t kKnownEventFlags =
    HAL_EVENT_DISABLE_TIMING | HAL_EVENT_BLOCKING_SYNC | HAL_EVENT_INTERPROCESS;

}  // namespace

extern "C" {

HAL_API halError halCreateEventWithFlag(halEvent* event, uint32_t flags) {
    return apiCall([&] {
        if (halError e = requireOutput(event, "halCreateEvent", "event")) return e;
        if ((flags & ~kKnownEventFlags) != 0) {
            return fail(HAL_ERROR_INVALID_VALUE, "halCreateEventWithFlag: unknown flags 0x{:x}",
                        flags & ~kKnownEventFlags);
        }
        Device* device = currentDevice();
        if ((flags & HAL_EVENT_INTERPROCESS) != 0) {
            if ((flags & HAL_EVENT_DISABLE_TIMING) == 0) {
                return fail(HAL_ERROR_INVALID_VALUE,
                            "halCreateEventWithFlag: HAL_EVENT_INTERPROCESS needs "
                            "HAL_EVENT_DISABLE_TIMING");
            }
            if (!device->supports(HAL_DEVICE_CAP_IPC_EVENTS)) {
                return fail(HAL_ERROR_NOT_SUPPORTED,
                            "halCreateEventWithFlag: the {} backend (device {}) cannot share "
                            "events between processes (HAL_EVENT_INTERPROCESS)",
                            device->backend->name, device->ordinal);
            }
        }
        halPluginEvent native = nullptr;
        if (halError e = checked(device->vtable->eventCreate(device->native, flags, &native),
                                 device, "halCreateEvent")) {
            return e;
        }
        halEvent_t* object = runtime().events.create();
        if (object == nullptr) {
            device->vtable->eventDestroy(native);
            return fail(HAL_ERROR_OUT_OF_MEMORY, "halCreateEvent: too many live events");
        }
        object->device = device;
        object->native = native;
        object->flags = flags;
        *event = object;
        return HAL_SUCCESS;
    });
}

HAL_API halError halCreateEvent(halEvent* event) {
    return halCreateEventWithFlag(event, HAL_EVENT_DEFAULT);
}

HAL_API halError halRecordEvent(halEvent eventHandle, halStream streamHandle) {
    return apiCall([&] {
        halEvent_t* event = nullptr;
        halStream_t* stream = nullptr;
        if (halError e = resolveEvent(eventHandle, &event, "halRecordEvent")) return e;
        if (halError e = resolveStream(streamHandle, &stream, "halRecordEvent")) return e;
        if (event->device != stream->device) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "halRecordEvent: the event belongs to device {}, the stream to device {}",
                        event->device->ordinal, stream->device->ordinal);
        }
        return recordEvent(event, stream, "halRecordEvent");
    });
}

HAL_API halError halQueryEvent(halEvent handle) {
    return apiCall([&] {
        halEvent_t* event = nullptr;
        if (halError e = resolveEvent(handle, &event, "halQueryEvent")) return e;
        return queryEvent(event, "halQueryEvent");
    });
}

HAL_API halError halSynchronizeEvent(halEvent handle) {
    return apiCall([&] {
        halEvent_t* event = nullptr;
        if (halError e = resolveEvent(handle, &event, "halSynchronizeEvent")) return e;
        return synchronizeEvent(event, "halSynchronizeEvent");
    });
}

HAL_API halError halEventElapsedTime(float* ms, halEvent startHandle, halEvent endHandle) {
    return apiCall([&] {
        if (halError e = requireOutput(ms, "halEventElapsedTime", "ms")) return e;
        halEvent_t* start = nullptr;
        halEvent_t* end = nullptr;
        if (halError e = resolveEvent(startHandle, &start, "halEventElapsedTime")) return e;
        if (halError e = resolveEvent(endHandle, &end, "halEventElapsedTime")) return e;
        if (start->device != end->device) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "halEventElapsedTime: the events belong to devices {} and {}",
                        start->device->ordinal, end->device->ordinal);
        }
        const auto* vtable = start->device->vtable;
        if (!start->device->supports(HAL_DEVICE_CAP_TIMING_EVENTS)) {
            return fail(HAL_ERROR_NOT_SUPPORTED,
                        "halEventElapsedTime: the {} backend has no timing events",
                        start->device->backend->name);
        }
        for (const halEvent_t* event : {start, end}) {
            if ((event->flags & HAL_EVENT_DISABLE_TIMING) != 0) {
                return fail(HAL_ERROR_INVALID_VALUE,
                            "halEventElapsedTime: event {} was created with "
                            "HAL_EVENT_DISABLE_TIMING",
                            static_cast<const void*>(event));
            }
            if (!event->recorded.load(std::memory_order_acquire)) {
                return fail(HAL_ERROR_INVALID_VALUE,
                            "halEventElapsedTime: event {} was never recorded",
                            static_cast<const void*>(event));
            }
        }
        // plugin.h promises the plugin complete events: a timestamp read before the device
        // wrote it is garbage on some drivers.
        for (const halEvent_t* event : {start, end}) {
            const halError status = vtable->eventQuery(event->native);
            if (status == HAL_ERROR_NOT_READY) {
                return fail(HAL_ERROR_NOT_READY,
                            "halEventElapsedTime: the {} event has not completed yet",
                            event == start ? "start" : "end");
            }
            if (halError e = checked(status, start->device, "halEventElapsedTime")) return e;
        }
        return checked(vtable->eventElapsedTime(ms, start->native, end->native), start->device,
                       "halEventElapsedTime");
    });
}

HAL_API halError halDestroyEvent(halEvent handle) {
    return apiCall([&] {
        halEvent_t* event = nullptr;
        if (halError e = resolveEvent(handle, &event, "halDestroyEvent")) return e;
        Device* device = event->device;
        const halPluginEvent native = event->native;
        runtime().events.destroy(event);
        return checked(device->vtable->eventDestroy(native), device, "halDestroyEvent");
    });
}

}  // extern "C"
