// Sharing device memory with other processes: the vendor's IPC memory handles (cuIpcGetMemHandle,
// cuIpcOpenMemHandle, cuIpcCloseMemHandle and HIP's same-named calls). The vendor's handle is
// carried as it is in the plugin's part of polyhal's handle. Drivers that lack the calls leave
// HAL_DEVICE_CAP_IPC_MEMORY unset (platform.hpp).
#ifndef POLYHAL_BACKENDS_GPU_COMMON_IPC_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_IPC_HPP_

#include <cstring>

#include "gpu_common/current_device.hpp"
#include "gpu_common/objects.hpp"
#include "gpu_common/vendor_call.hpp"

namespace polyhal::gpu {

template <class Api>
bool hasIpcMemory() noexcept {
    const auto& vendor = Api::symbols;
    return vendor.ipcGetMemHandle.address != nullptr &&
           vendor.ipcOpenMemHandle.address != nullptr &&
           vendor.ipcCloseMemHandle.address != nullptr;
}

template <class Api>
halError requireIpcMemory() noexcept {
    if (hasIpcMemory<Api>()) return HAL_SUCCESS;
    return plugin::fail(HAL_ERROR_NOT_SUPPORTED, "%s lacks %s, %s or %s", Api::kLibraryDescription,
                        Api::symbols.ipcGetMemHandle.name, Api::symbols.ipcOpenMemHandle.name,
                        Api::symbols.ipcCloseMemHandle.name);
}

// `base` is an allocation exactly as memAllocDevice returned it, which the vendor requires.
template <class Api>
halError ipcMemGetHandle(halPluginDevice handle, void* base, halPluginIpcHandle* out) noexcept {
    static_assert(sizeof(typename Api::IpcMemHandle) <= sizeof out->bytes,
                  "the vendor's handle must fit the plugin's part");
    if (halError error = requireIpcMemory<Api>()) return error;
    const CurrentDevice<Api> current(*fromHandle<Api>(handle));
    if (halError error = current.error()) return error;
    typename Api::IpcMemHandle exported{};
    if (halError error = call<Api>(Api::symbols.ipcGetMemHandle, &exported,
                                   Api::toDevicePointer(base))) {
        return error;
    }
    std::memset(out->bytes, 0, sizeof out->bytes);
    std::memcpy(out->bytes, &exported, sizeof exported);
    return HAL_SUCCESS;
}

template <class Api>
halError ipcMemOpenHandle(halPluginDevice handle, const halPluginIpcHandle* in, size_t /*size*/,
                          void** base) noexcept {
    if (halError error = requireIpcMemory<Api>()) return error;
    const CurrentDevice<Api> current(*fromHandle<Api>(handle));
    if (halError error = current.error()) return error;
    typename Api::IpcMemHandle imported;
    std::memcpy(&imported, in->bytes, sizeof imported);
    typename Api::DevicePointer opened{};
    if (halError error = call<Api>(Api::symbols.ipcOpenMemHandle, &opened, imported,
                                   Api::kIpcMemLazyEnablePeerAccess)) {
        return error;
    }
    *base = Api::toPointer(opened);
    return HAL_SUCCESS;
}

template <class Api>
halError ipcMemCloseHandle(halPluginDevice handle, void* base) noexcept {
    if (halError error = requireIpcMemory<Api>()) return error;
    const CurrentDevice<Api> current(*fromHandle<Api>(handle));
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.ipcCloseMemHandle, Api::toDevicePointer(base));
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_IPC_HPP_
