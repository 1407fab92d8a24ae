// Events shared between processes: halIpcGetEventHandle, halIpcOpenEventHandle.
#include <cstring>

#include "api.hpp"
#include "ipc_handle.hpp"

using namespace polyhal;

extern "C" {

HAL_API halError halIpcGetEventHandle(halIpcEventHandle* handle, halEvent eventHandle) {
    return apiCall([&] {
        const char* operation = "halIpcGetEventHandle";
        if (halError e = requireOutput(handle, operation, "handle")) return e;
        halEvent_t* event = nullptr;
        if (halError e = resolveEvent(eventHandle, &event, operation)) return e;
        if ((event->flags & HAL_EVENT_INTERPROCESS) == 0) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "{}: event {} was created without HAL_EVENT_INTERPROCESS", operation,
                        static_cast<const void*>(eventHandle));
        }
        Device* device = event->device;
        IpcHandle exported = makeIpcHandle(IpcKind::kEvent, device);
        if (halError e = checked(device->vtable->ipcEventGetHandle(event->native,
                                                                   &exported.plugin),
                                 device, operation)) {
            return e;
        }
        std::memset(handle->reserved, 0, sizeof handle->reserved);
        std::memcpy(handle->reserved, &exported, sizeof exported);
        return HAL_SUCCESS;
    });
}

HAL_API halError halIpcOpenEventHandle(halEvent* event, halIpcEventHandle handle) {
    return apiCall([&] {
        const char* operation = "halIpcOpenEventHandle";
        if (halError e = requireOutput(event, operation, "event")) return e;
        Device* device = currentDevice();
        IpcHandle imported;
        if (halError e = readIpcHandle(handle.reserved, IpcKind::kEvent, device, operation,
                                       &imported)) {
            return e;
        }
        if (!device->supports(HAL_DEVICE_CAP_IPC_EVENTS)) {
            return fail(HAL_ERROR_NOT_SUPPORTED,
                        "{}: the {} backend (device {}) cannot share events between processes",
                        operation, device->backend->name, device->ordinal);
        }
        halPluginEvent native = nullptr;
        if (halError e = checked(device->vtable->ipcEventOpenHandle(device->native,
                                                                    &imported.plugin, &native),
                                 device, operation)) {
            return e;
        }
        halEvent_t* object = runtime().events.create();
        if (object == nullptr) {
            device->vtable->eventDestroy(native);
            return fail(HAL_ERROR_OUT_OF_MEMORY, "{}: too many live events", operation);
        }
        object->device = device;
        object->native = native;
        object->flags = HAL_EVENT_INTERPROCESS | HAL_EVENT_DISABLE_TIMING;
        *event = object;
        return HAL_SUCCESS;
    });
}

}  // extern "C"
