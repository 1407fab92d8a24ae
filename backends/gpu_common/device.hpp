// Device entries: opening and closing devices, describing them, waiting for them, and peer
// access between two devices of the plugin.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_DEVICE_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_DEVICE_HPP_

#include <cstring>
#include <memory>
#include <new>

#include "gpu_common/engine/current_device.hpp"
#include "gpu_common/engine/native_graph.hpp"
#include "gpu_common/engine/objects.hpp"
#include "gpu_common/engine/retired_streams.hpp"
#include "gpu_common/engine/vendor_call.hpp"
#include "gpu_common/event.hpp"
#include "gpu_common/memory.hpp"

namespace polyhal::gpu {

// Opening a device costs nothing: it is activated on its first use (engine/current_device.hpp).
template <class Api>
halError deviceOpen(int ordinal, halPluginDevice* handle) noexcept {
    auto device = std::unique_ptr<Device<Api>>(new (std::nothrow) Device<Api>{});
    if (device == nullptr) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "no host memory for device %d", ordinal);
    }
    if (halError error = call<Api>(Api::symbols.deviceGet, &device->native, ordinal)) return error;
    *handle = plugin::toHandle(device.release());
    return HAL_SUCCESS;
}

// What was kept past its destroy goes with the device (engine/native_graph.hpp,
// engine/retired_streams.hpp), when no object of it is used any more.
template <class Api>
void releaseKeptObjects(const Device<Api>& device) noexcept {
    const ContextScope<Api> scope(device.context);
    if constexpr (!Api::kExecDestroyWaitsForLaunches) RetiredGraphs<Api>::closeDevice(&device);
    if constexpr (Api::kEventQueriesReadTheirStream) RetiredStreams<Api>::closeDevice(&device);
}

// The core closes a device once its objects are destroyed; frees still queued finish first.
template <class Api>
void deviceClose(halPluginDevice handle) noexcept {
    std::unique_ptr<Device<Api>> device(&plugin::fromHandle<Device<Api>>(handle));
    if (!device->active) return;
    releaseKeptObjects(*device);
    device->frees.stop();
    Api::releaseContext(device->native, device->context);
}

// The vendor's reset destroys everything of the device's context, so nothing the plugin kept may
// outlive it: kept streams and graphs go first, and the queued frees are done (a free after the
// reset would name memory the vendor no longer knows). A device never used has nothing to reset.
template <class Api>
halError deviceReset(halPluginDevice handle) noexcept {
    const Device<Api>& device = plugin::fromHandle<Device<Api>>(handle);
    if (!device.active) return HAL_SUCCESS;
    releaseKeptObjects(device);
    device.frees.drain();
    const CurrentDevice<Api> current(device);
    if (halError error = current.error()) return error;
    return Api::resetContext(device.native);
}

// The stream priority range is a property of a context (cuCtxGetStreamPriorityRange), so it is
// read from the device in use, when the core first needs it: halInit opens no device for it (a
// CUDA primary context holds hundreds of MB of device memory, and a device in exclusive-process
// mode may belong to another process). A device whose context cannot be had fails, and the core
// then gives it no priorities.
template <class Api>
halError deviceGetStreamPriorityRange(halPluginDevice handle, int* least, int* greatest) noexcept {
    const Device<Api>& device = plugin::fromHandle<Device<Api>>(handle);
    const CurrentDevice<Api> current(device);
    if (halError error = current.error()) {
        plugin::log(HAL_LOG_WARN, "device %d: no stream priorities: its context is unavailable",
                    static_cast<int>(device.native));
        return error;
    }
    return call<Api>(Api::symbols.streamPriorityRange, least, greatest);
}

template <class Api>
halError deviceGetInfo(halPluginDevice handle, halPluginDeviceInfo* info) noexcept {
    const Device<Api>& device = plugin::fromHandle<Device<Api>>(handle);
    const auto& vendor = Api::symbols;
    halPluginDeviceInfo filled{};
    size_t totalMemory = 0;
    int computeUnits = 0;
    int maxThreadsPerBlock = 0;
    int maxSharedMemoryPerBlock = 0;
    halError error = HAL_SUCCESS;
    if ((error = call<Api>(vendor.deviceGetName, filled.name, static_cast<int>(sizeof filled.name),
                           device.native)) ||
        (error = call<Api>(vendor.deviceTotalMem, &totalMemory, device.native)) ||
        (error = call<Api>(vendor.deviceGetAttribute, &computeUnits, Api::kAttributeComputeUnits,
                           device.native)) ||
        (error = call<Api>(vendor.deviceGetAttribute, &maxThreadsPerBlock,
                           Api::kAttributeMaxThreadsPerBlock, device.native)) ||
        (error = call<Api>(vendor.deviceGetAttribute, &maxSharedMemoryPerBlock,
                           Api::kAttributeMaxSharedMemoryPerBlock, device.native))) {
        return error;
    }
    filled.totalMemory = totalMemory;
    filled.computeUnits = static_cast<uint32_t>(computeUnits);
    filled.maxThreadsPerBlock = static_cast<uint32_t>(maxThreadsPerBlock);
    filled.maxSharedMemoryPerBlock = static_cast<uint64_t>(maxSharedMemoryPerBlock);
    filled.maxKernelArgumentBytes = Api::maxKernelArgumentBytes(device.native);
    filled.capabilities = HAL_DEVICE_CAP_TIMING_EVENTS | HAL_DEVICE_CAP_HOST_FUNCTIONS |
                          HAL_DEVICE_CAP_KERNELS | HAL_DEVICE_CAP_NATIVE_HANDLES |
                          HAL_DEVICE_CAP_PEER_COPY;
    if (hasIpcMemory<Api>()) filled.capabilities |= HAL_DEVICE_CAP_IPC_MEMORY;
    if (deviceSharesEvents<Api>(device.native)) filled.capabilities |= HAL_DEVICE_CAP_IPC_EVENTS;
    // Every device has stream priorities: CUDA's from compute capability 3.5, the oldest the
    // supported drivers (11.0 and newer) run; HIP's on every device. The range itself is read
    // when first needed (deviceGetStreamPriorityRange).
    filled.capabilities |= HAL_DEVICE_CAP_STREAM_PRIORITIES;
    // Both vendors register host memory on every Linux device; managed memory is per device.
    filled.capabilities |= HAL_DEVICE_CAP_HOST_REGISTER;
    int managedMemory = 0;
    if (vendor.deviceGetAttribute.address(&managedMemory, Api::kAttributeManagedMemory,
                                          device.native) == Api::kSuccess &&
        managedMemory != 0) {
        filled.capabilities |= HAL_DEVICE_CAP_MANAGED_MEMORY;
    }
    // A core built against an older, smaller halPluginDeviceInfo gets the members it knows.
    const size_t size = info->size < sizeof filled ? info->size : sizeof filled;
    filled.size = info->size;
    std::memcpy(info, &filled, size);
    return HAL_SUCCESS;
}

template <class Api>
halError deviceSynchronize(halPluginDevice handle) noexcept {
    const CurrentDevice<Api> current(plugin::fromHandle<Device<Api>>(handle));
    if (halError error = current.error()) return error;
    const halError status = call<Api>(Api::symbols.deviceSynchronize);
    reapRetiredGraphs<Api>();
    return status;
}

template <class Api>
halError deviceCanAccessPeer(halPluginDevice device, halPluginDevice peer,
                             int* canAccess) noexcept {
    return call<Api>(Api::symbols.peerAccessCan, canAccess,
                     plugin::fromHandle<Device<Api>>(device).native,
                     plugin::fromHandle<Device<Api>>(peer).native);
}

// Lets kernels of `device` reach `peer`'s memory (CUDA: enabled in the device's context for the
// peer's context; HIP: from the current device to the peer's). An application may have enabled
// it already through the vendor API, as PyTorch does: that is not an error, and neither is
// disabling what it disabled meanwhile.
template <class Api>
halError setPeerAccess(halPluginDevice device, halPluginDevice peer, bool enable) noexcept {
    const Device<Api>& target = plugin::fromHandle<Device<Api>>(peer);
    if (halError error = activate(target)) return error;
    const CurrentDevice<Api> current(plugin::fromHandle<Device<Api>>(device));
    if (halError error = current.error()) return error;
    const auto& vendor = Api::symbols;
    const typename Api::Result result = enable ? vendor.peerAccessEnable.address(target.context, 0u)
                                               : vendor.peerAccessDisable.address(target.context);
    if (result == Api::kSuccess ||
        result == (enable ? Api::kPeerAccessAlreadyEnabled : Api::kPeerAccessNotEnabled)) {
        return HAL_SUCCESS;
    }
    return failCall<Api>(Api::toHalError(result), result,
                         enable ? vendor.peerAccessEnable.name : vendor.peerAccessDisable.name);
}

template <class Api>
halError deviceEnablePeerAccess(halPluginDevice device, halPluginDevice peer) noexcept {
    return setPeerAccess<Api>(device, peer, true);
}

template <class Api>
halError deviceDisablePeerAccess(halPluginDevice device, halPluginDevice peer) noexcept {
    return setPeerAccess<Api>(device, peer, false);
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_DEVICE_HPP_
