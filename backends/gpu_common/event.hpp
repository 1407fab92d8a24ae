// Event entries, and events shared with other processes.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_EVENT_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_EVENT_HPP_

#include <cstring>
#include <memory>
#include <new>

#include "gpu_common/engine/current_device.hpp"
#include "gpu_common/engine/native_graph.hpp"
#include "gpu_common/engine/objects.hpp"
#include "gpu_common/engine/vendor_call.hpp"

namespace polyhal::gpu {

// The vendor's event flags for HAL_EVENT_* `flags` (the bit values differ between vendors).
template <class Api>
constexpr unsigned vendorEventFlags(uint32_t flags) noexcept {
    unsigned vendorFlags = 0;
    if (flags & HAL_EVENT_DISABLE_TIMING) vendorFlags |= Api::kEventDisableTiming;
    if (flags & HAL_EVENT_BLOCKING_SYNC) vendorFlags |= Api::kEventBlockingSync;
    if (flags & HAL_EVENT_INTERPROCESS) vendorFlags |= Api::kEventInterprocess;
    return vendorFlags;
}

// An event of `device` whose vendor event `makeNative(&native)` makes, with the device current.
template <class Api, class MakeNative>
halError newEvent(halPluginDevice deviceHandle, const MakeNative& makeNative,
                  halPluginEvent* handle) noexcept {
    const Device<Api>* device = &plugin::fromHandle<Device<Api>>(deviceHandle);
    auto event = std::unique_ptr<Event<Api>>(new (std::nothrow) Event<Api>{device, {}});
    if (event == nullptr) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "no host memory for an event");
    }
    const CurrentDevice<Api> current(*device);
    if (halError error = current.error()) return error;
    if (halError error = makeNative(&event->native)) return error;
    *handle = plugin::toHandle(event.release());
    return HAL_SUCCESS;
}

template <class Api>
halError eventCreate(halPluginDevice device, uint32_t flags, halPluginEvent* handle) noexcept {
    return newEvent<Api>(
        device,
        [flags](typename Api::Event* native) noexcept {
            return call<Api>(Api::symbols.eventCreate, native, vendorEventFlags<Api>(flags));
        },
        handle);
}

// A pending event may be destroyed: the vendor keeps the waits already enqueued on it. As in
// streamDestroy, the handle is released even when the device cannot be made current.
template <class Api>
halError eventDestroy(halPluginEvent handle) noexcept {
    std::unique_ptr<Event<Api>> event(&plugin::fromHandle<Event<Api>>(handle));
    const CurrentDevice<Api> current(*event->device);
    const halError destroyed = call<Api>(Api::symbols.eventDestroy, event->native);
    return current.error() != HAL_SUCCESS ? current.error() : destroyed;
}

template <class Api>
halError eventRecord(halPluginEvent eventHandle, halPluginStream streamHandle) noexcept {
    const Event<Api>& event = plugin::fromHandle<Event<Api>>(eventHandle);
    const Stream<Api>& stream = plugin::fromHandle<Stream<Api>>(streamHandle);
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.eventRecord, event.native, stream.native);
}

// A never-recorded event is complete for the vendor too.
template <class Api>
halError eventQuery(halPluginEvent handle) noexcept {
    const Event<Api>& event = plugin::fromHandle<Event<Api>>(handle);
    const CurrentDevice<Api> current(*event.device);
    if (halError error = current.error()) return error;
    return query<Api>(Api::symbols.eventQuery, event.native);
}

template <class Api>
halError eventSynchronize(halPluginEvent handle) noexcept {
    const Event<Api>& event = plugin::fromHandle<Event<Api>>(handle);
    const CurrentDevice<Api> current(*event.device);
    if (halError error = current.error()) return error;
    const halError status = call<Api>(Api::symbols.eventSynchronize, event.native);
    reapRetiredGraphs<Api>();
    return status;
}

template <class Api>
halError eventElapsedTime(float* ms, halPluginEvent startHandle,
                          halPluginEvent endHandle) noexcept {
    const Event<Api>& start = plugin::fromHandle<Event<Api>>(startHandle);
    const Event<Api>& end = plugin::fromHandle<Event<Api>>(endHandle);
    const CurrentDevice<Api> current(*start.device);
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.eventElapsedTime, ms, start.native, end.native);
}

// Sharing events with other processes: the vendor's IPC event handles (cuIpcGetEventHandle,
// cuIpcOpenEventHandle and HIP's same-named calls), carried as they are in the plugin's part of
// polyhal's handle. The core creates such events with HAL_EVENT_INTERPROCESS and
// HAL_EVENT_DISABLE_TIMING, as the vendors require. Drivers that lack the calls, and a vendor
// whose stream wait for such an event blocks the calling thread (Api::kIpcEventWaitsOnDevice
// false), leave HAL_DEVICE_CAP_IPC_EVENTS unset (deviceGetInfo).
template <class Api>
bool hasIpcEvents() noexcept {
    if constexpr (!Api::kIpcEventWaitsOnDevice) return false;
    const auto& vendor = Api::symbols;
    return vendor.ipcGetEventHandle.address != nullptr &&
           vendor.ipcOpenEventHandle.address != nullptr;
}

// Can `device` share events? Where the vendor has an attribute for it (CUDA 12's
// CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED), the device says; a driver that does not know the
// attribute (older than CUDA 12) shares events wherever it has the calls.
template <class Api>
bool deviceSharesEvents(typename Api::NativeDevice device) noexcept {
    if (!hasIpcEvents<Api>()) return false;
    if constexpr (Api::kHasIpcEventAttribute) {
        int supported = 1;
        const auto result = Api::symbols.deviceGetAttribute.address(
            &supported, Api::kAttributeIpcEventSupported, device);
        return result != Api::kSuccess || supported != 0;
    }
    return true;
}

template <class Api>
halError requireIpcEvents() noexcept {
    if constexpr (!Api::kIpcEventWaitsOnDevice) {
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED,
                            "%s: a stream's wait for an interprocess event blocks the waiting "
                            "thread until the other process records it, so the %s backend does "
                            "not share events",
                            Api::kLibraryDescription, Api::kName);
    }
    if (hasIpcEvents<Api>()) return HAL_SUCCESS;
    return plugin::fail(HAL_ERROR_NOT_SUPPORTED, "%s lacks %s or %s", Api::kLibraryDescription,
                        Api::symbols.ipcGetEventHandle.name, Api::symbols.ipcOpenEventHandle.name);
}

template <class Api>
halError ipcEventGetHandle(halPluginEvent handle, halPluginIpcHandle* out) noexcept {
    static_assert(sizeof(typename Api::IpcEventHandle) <= sizeof out->bytes,
                  "the vendor's handle must fit the plugin's part");
    if (halError error = requireIpcEvents<Api>()) return error;
    const Event<Api>& event = plugin::fromHandle<Event<Api>>(handle);
    const CurrentDevice<Api> current(*event.device);
    if (halError error = current.error()) return error;
    typename Api::IpcEventHandle exported{};
    if (halError error = call<Api>(Api::symbols.ipcGetEventHandle, &exported, event.native)) {
        return error;
    }
    std::memset(out->bytes, 0, sizeof out->bytes);
    std::memcpy(out->bytes, &exported, sizeof exported);
    return HAL_SUCCESS;
}

// The vendor's opened event behaves as one created with timing disabled: it is recorded, waited
// for, queried and synchronised like the others, in the device that opened it.
template <class Api>
halError ipcEventOpenHandle(halPluginDevice device, const halPluginIpcHandle* in,
                            halPluginEvent* handle) noexcept {
    if (halError error = requireIpcEvents<Api>()) return error;
    typename Api::IpcEventHandle imported;
    std::memcpy(&imported, in->bytes, sizeof imported);
    return newEvent<Api>(
        device,
        [&imported](typename Api::Event* native) noexcept {
            return call<Api>(Api::symbols.ipcOpenEventHandle, native, imported);
        },
        handle);
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_EVENT_HPP_
