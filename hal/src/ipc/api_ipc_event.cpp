// Events shared between processes: halIpcGetEventHandle, halIpcOpenEventHandle.
#include "api.hpp"
#include "ipc_handle.hpp"

using namespace polyhal;

extern "C" {

HAL_API halError halIpcGetEventHandle(halIpcEventHandle* handle, halEvent eventHandle) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, operation = __func__] {
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
        if (halError e = checked(device->vtable->ipcEventGetHandle(event->native, &exported.plugin),
                                 device, operation)) {
            return e;
        }
        storeIpcHandle(exported, handle);
        return HAL_SUCCESS;
    });
}

HAL_API halError halIpcOpenEventHandle(halEvent* event, halIpcEventHandle handle) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, operation = __func__] {
        if (halError e = requireOutput(event, operation, "event")) return e;
        Device* device = currentDevice();
        IpcHandle imported;
        if (halError e =
                readIpcHandle(handle.reserved, IpcKind::kEvent, device, operation, &imported)) {
            return e;
        }
        if (!device->supports(HAL_DEVICE_CAP_IPC_EVENTS)) {
            return fail(HAL_ERROR_NOT_SUPPORTED,
                        "{}: the {} backend (device {}) cannot share events between processes",
                        operation, device->backend->name, device->ordinal);
        }
        halPluginEvent native = nullptr;
        if (halError e = checked(
                device->vtable->ipcEventOpenHandle(device->native, &imported.plugin, &native),
                device, operation)) {
            return e;
        }
        return makeEventHandle(device, native, HAL_EVENT_INTERPROCESS | HAL_EVENT_DISABLE_TIMING,
                               operation, event);
    });
}

}  // extern "C"
