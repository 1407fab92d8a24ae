// Opening Level Zero devices, their properties and peer access.
#include "device.hpp"

#include <polyhal/plugin_support.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "engine/translate.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "stream.hpp"
#include "symbols.hpp"

namespace polyhal::level_zero {
namespace {

// Whether `device` and every other device of the platform copy to each other directly.
halError reachesEveryPeer(const Platform::Entry& device, bool* reaches) {
    *reaches = true;
    for (const Platform::Entry& other : platform().devices) {
        if (other.device == device.device) continue;
        if (other.driver != device.driver) {
            *reaches = false;
            return HAL_SUCCESS;
        }
        for (const auto& [from, to] :
             {std::pair(device.device, other.device), std::pair(other.device, device.device)}) {
            ze_bool_t canAccess = 0;
            POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceCanAccessPeer, from, to, &canAccess);
            if (canAccess == 0) *reaches = false;
        }
    }
    return HAL_SUCCESS;
}

}  // namespace

halError deviceOpen(int ordinal, halPluginDevice* device) {
    const Platform::Entry& entry = platform().devices.at(static_cast<size_t>(ordinal));
    auto opened = std::make_unique<Device>();
    opened->driver = entry.driver;
    opened->device = entry.device;

    // The 1.2 form gives the timer resolution in ticks per second rather than whole nanoseconds.
    opened->properties.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetProperties, entry.device, &opened->properties);
    opened->compute.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetComputeProperties, entry.device, &opened->compute);

    uint32_t count = 0;
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetMemoryProperties, entry.device, &count, nullptr);
    std::vector<ze_device_memory_properties_t> memories(
        count,
        describedAs<ze_device_memory_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES));
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetMemoryProperties, entry.device, &count, memories.data());
    for (const auto& memory : memories) opened->totalMemory += memory.totalSize;
    auto access = describedAs<ze_device_memory_access_properties_t>(
        ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES);
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetMemoryAccessProperties, entry.device, &access);
    opened->sharedMemory =
        (access.sharedSingleDeviceAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_RW) != 0;

    count = 0;
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetCommandQueueGroupProperties, entry.device, &count,
                               nullptr);
    std::vector<ze_command_queue_group_properties_t> groups(
        count, describedAs<ze_command_queue_group_properties_t>(
                   ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES));
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetCommandQueueGroupProperties, entry.device, &count,
                               groups.data());
    const int compute = findComputeQueueGroup(groups.data(), count);
    if (compute < 0) {
        return plugin::fail(HAL_ERROR_BACKEND,
                            "Level Zero device '%s' has no command queue "
                            "group for compute work",
                            opened->properties.name);
    }
    opened->computeQueueOrdinal = static_cast<uint32_t>(compute);
    opened->computeQueueCount = std::max(groups[static_cast<size_t>(compute)].numQueues, 1u);
    opened->copyQueueOrdinal = findCopyOnlyQueueGroup(groups.data(), count);
    if (opened->copyQueueOrdinal >= 0) {
        opened->copyQueueCount = groups[static_cast<size_t>(opened->copyQueueOrdinal)].numQueues;
        if (opened->copyQueueCount == 0) opened->copyQueueOrdinal = -1;
    }
    if (halError error = reachesEveryPeer(entry, &opened->peerCopy); error != HAL_SUCCESS) {
        return error;
    }
    *device = plugin::toHandle(opened.release());
    return HAL_SUCCESS;
}

void deviceClose(halPluginDevice handle) {
    Device* device = &plugin::fromHandle<Device>(handle);
    reapRetiredGraphs(*device, true);
    reapRetiredStreams(*device, true);
    delete device;
}

// Device memory is shared with other processes only where the driver's handle is valid in another
// process as it is. It is not with Intel's Linux driver, whose ze_ipc_mem_handle_t carries a
// dma-buf file descriptor of the exporting process: carrying its bytes would open another
// process's descriptor number (an unrelated file, or none). Until the descriptor travels itself
// (zeMemGetFileDescriptorFromIpcHandleExp, pidfd_getfd, zeMemGetIpcHandleFromFileDescriptorExp),
// only a driver that says so in POLYHAL_LEVEL_ZERO_IPC_MEMORY=portable-handles gets the
// capability: the vendor-driver double, whose handles name a shared memory file.
halError deviceGetInfo(halPluginDevice handle, halPluginDeviceInfo* info) {
    const Device& device = plugin::fromHandle<Device>(handle);
    auto ipc = describedAs<ze_driver_ipc_properties_t>(ZE_STRUCTURE_TYPE_DRIVER_IPC_PROPERTIES);
    POLYHAL_ZE_RETURN_IF_ERROR(zeDriverGetIpcProperties, device.driver->handle, &ipc);
    uint64_t capabilities = deviceCapabilities(device.peerCopy);
    const char* portable = std::getenv("POLYHAL_LEVEL_ZERO_IPC_MEMORY");
    if ((ipc.flags & ZE_IPC_PROPERTY_FLAG_MEMORY) != 0 && portable != nullptr &&
        std::strcmp(portable, "portable-handles") == 0) {
        capabilities |= HAL_DEVICE_CAP_IPC_MEMORY;
    }
    // Interprocess events need no driver support (engine/shared_event_steps.hpp).
    capabilities |= HAL_DEVICE_CAP_IPC_EVENTS;
    if (device.sharedMemory) capabilities |= HAL_DEVICE_CAP_MANAGED_MEMORY;
    fillDeviceInfo(device.properties, device.compute, device.totalMemory, capabilities, info);
    return HAL_SUCCESS;
}

halError deviceSynchronize(halPluginDevice handle) {
    Device& device = plugin::fromHandle<Device>(handle);
    std::vector<std::shared_ptr<Stream>> live;
    std::vector<std::shared_ptr<Stream>> retiring;
    {
        std::lock_guard<std::mutex> lock(device.streamsMutex);
        live = device.streams;
        retiring = device.retiringStreams;
    }
    // Every stream is waited for; the first failure is the one reported (a later failure would
    // overwrite its message), the others stay pending on their streams.
    halError first = HAL_SUCCESS;
    for (const auto& stream : live) {
        if (first == HAL_SUCCESS) {
            first = stream->synchronize();
        } else {
            stream->waitIdle();
        }
    }
    for (const auto& stream : retiring) stream->waitIdle();
    reapRetiredStreams(device, false);
    reapRetiredGraphs(device, false);
    return first;
}

// Level Zero has no reset of a device. What the plugin kept for it goes; a device the driver lost
// stays lost, and the reset says so: compute-runtime detects a GPU hang from the kernel driver's
// reset statistics of the DRM contexts its engines opened at zeInit (shared/source/os_interface/
// linux/drm_neo.cpp, Drm::checkResetStatus), which nothing a process calls opens again, and
// zeDeviceGetStatus reports ZE_RESULT_ERROR_DEVICE_LOST from then on
// (level_zero/core/source/device/device.cpp:98-110). A new Level Zero context would not help.
halError deviceReset(halPluginDevice handle) {
    Device& device = plugin::fromHandle<Device>(handle);
    reapRetiredGraphs(device, true);
    reapRetiredStreams(device, true);
    const ze_result_t status = ze.zeDeviceGetStatus.address(device.device);
    if (status != ZE_RESULT_ERROR_DEVICE_LOST) return check(status, "zeDeviceGetStatus");
    return plugin::fail(HAL_ERROR_LAUNCH_FAILED,
                        "%s: the Level Zero driver keeps a device lost to a GPU hang until the "
                        "process exits; no reset recovers it",
                        describe(status, "zeDeviceGetStatus").c_str());
}

halError deviceCanAccessPeer(halPluginDevice deviceHandle, halPluginDevice peerHandle,
                             int* canAccess) {
    const Device& device = plugin::fromHandle<Device>(deviceHandle);
    const Device& peer = plugin::fromHandle<Device>(peerHandle);
    ze_bool_t reaches = 0;
    if (device.driver == peer.driver) {
        POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceCanAccessPeer, device.device, peer.device, &reaches);
    }
    *canAccess = reaches != 0 ? 1 : 0;
    return HAL_SUCCESS;
}

halError deviceEnablePeerAccess(halPluginDevice device, halPluginDevice peer) {
    int canAccess = 0;
    if (halError error = deviceCanAccessPeer(device, peer, &canAccess); error != HAL_SUCCESS) {
        return error;
    }
    if (canAccess == 0) {
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED,
                            "Level Zero device '%s' cannot access the memory of '%s' "
                            "(zeDeviceCanAccessPeer, or another driver)",
                            plugin::fromHandle<Device>(device).properties.name,
                            plugin::fromHandle<Device>(peer).properties.name);
    }
    return HAL_SUCCESS;
}

halError deviceDisablePeerAccess(halPluginDevice /*device*/, halPluginDevice /*peer*/) {
    return HAL_SUCCESS;
}

}  // namespace polyhal::level_zero
