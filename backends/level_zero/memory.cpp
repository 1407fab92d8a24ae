// Device and host memory, copies and fills, and device memory shared with other processes: the
// memory entries.
#include <polyhal/plugin_support.hpp>

#include <cstring>

#include "device.hpp"
#include "engine/copy.hpp"
#include "engine/translate.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "stream.hpp"
#include "symbols.hpp"

namespace polyhal::level_zero {
namespace {

// halMalloc promises 256-byte alignment.
constexpr size_t kAlignment = 256;

// An allocation larger than the device can make at once is out of memory too, as it is on
// other backends, so that the pool's release-and-retry applies to it.
halError checkAllocation(ze_result_t result, const char* call, size_t size) {
    if (result == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY ||
        result == ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY ||
        result == ZE_RESULT_ERROR_UNSUPPORTED_SIZE) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "%s of %zu bytes: %s (%s)", call, size,
                            resultName(result), resultDescription(result));
    }
    return check(result, call);
}

}  // namespace

halError memAllocDevice(halPluginDevice handle, size_t size, void** ptr) {
    const Device& device = plugin::fromHandle<Device>(handle);
    // Beyond the device's maxMemAllocSize, an allocation needs the relaxed-allocation-limits
    // extension; a driver without it rejects the size as it would have anyway.
    const ze_relaxed_allocation_limits_exp_desc_t relaxed{
        ZE_STRUCTURE_TYPE_RELAXED_ALLOCATION_LIMITS_EXP_DESC, nullptr,
        ZE_RELAXED_ALLOCATION_LIMITS_EXP_FLAG_MAX_SIZE};
    const bool large = size > device.properties.maxMemAllocSize;
    const ze_device_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
                                          large ? &relaxed : nullptr, 0, 0};
    return checkAllocation(ze.zeMemAllocDevice.address(device.driver->context, &desc, size,
                                                       kAlignment, device.device, ptr),
                           "zeMemAllocDevice", size);
}

halError memFreeDevice(halPluginDevice handle, void* ptr) {
    Driver& driver = *plugin::fromHandle<Device>(handle).driver;
    driver.ipcExports.release(ptr);
    POLYHAL_ZE_RETURN_IF_ERROR(zeMemFree, driver.context, ptr);
    return HAL_SUCCESS;
}

halError memAllocHost(halPluginDevice device, size_t size, void** ptr) {
    const ze_host_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    return checkAllocation(
        ze.zeMemAllocHost.address(plugin::fromHandle<Device>(device).driver->context, &desc, size,
                                  kAlignment, ptr),
        "zeMemAllocHost", size);
}

// A shared allocation of the device: the driver migrates it between the host and the device.
halError memAllocManaged(halPluginDevice handle, size_t size, void** ptr) {
    const Device& device = plugin::fromHandle<Device>(handle);
    const ze_device_mem_alloc_desc_t deviceDesc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0,
                                                0};
    const ze_host_mem_alloc_desc_t hostDesc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    return checkAllocation(
        ze.zeMemAllocShared.address(device.driver->context, &deviceDesc, &hostDesc, size,
                                    kAlignment, device.device, ptr),
        "zeMemAllocShared", size);
}

halError memFreeManaged(halPluginDevice device, void* ptr) {
    POLYHAL_ZE_RETURN_IF_ERROR(zeMemFree, plugin::fromHandle<Device>(device).driver->context, ptr);
    return HAL_SUCCESS;
}

halError memFreeHost(halPluginDevice device, void* ptr) {
    POLYHAL_ZE_RETURN_IF_ERROR(zeMemFree, plugin::fromHandle<Device>(device).driver->context, ptr);
    return HAL_SUCCESS;
}

// One call serves every kind: Level Zero copies between any memory its device can reach. A
// source in pageable host memory is staged (Stream::appendStagedCopy): the device would read it
// only when the copy runs, and hal.h lets the caller reuse it once the call returns.
halError memcpyAsync(halPluginStream handle, void* dst, const void* src, size_t count,
                     halMemcpyKind kind) {
    Stream& stream = plugin::fromHandle<Stream>(handle);
    const bool mayBeHost = kind != HAL_MEMCPY_DEVICE_TO_DEVICE && kind != HAL_MEMCPY_DEVICE_TO_HOST;
    if (count > 0 && mayBeHost) {
        auto properties = describedAs<ze_memory_allocation_properties_t>(
            ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES);
        POLYHAL_ZE_RETURN_IF_ERROR(zeMemGetAllocProperties, stream.device().driver->context, src,
                                   &properties, nullptr);
        if (properties.type == ZE_MEMORY_TYPE_UNKNOWN) {
            return stream.appendStagedCopy(dst, src, count);
        }
    }
    return stream.appendCopy(Copy::linear(dst, src, count));
}

// One region copy; a box beyond the 32-bit region fields goes a row at a time.
halError memcpy3DAsync(halPluginStream handle, const halMemcpy3DParams* box) {
    Stream& stream = plugin::fromHandle<Stream>(handle);
    return forEachCopyOf(*box, [&](const Copy& copy) { return stream.appendCopy(copy); });
}

halError memcpyPeerAsync(halPluginStream stream, void* dst, halPluginDevice dstHandle,
                         const void* src, halPluginDevice srcHandle, size_t count) {
    const Device& dstDevice = plugin::fromHandle<Device>(dstHandle);
    const Device& srcDevice = plugin::fromHandle<Device>(srcHandle);
    // The core calls this only between devices reporting HAL_DEVICE_CAP_PEER_COPY, which share
    // one context; anything else would be a copy Level Zero cannot make.
    if (!dstDevice.peerCopy || !srcDevice.peerCopy || dstDevice.driver != srcDevice.driver) {
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED,
                            "no peer copy from Level Zero device '%s' to '%s': they do not share "
                            "a driver context with peer access",
                            srcDevice.properties.name, dstDevice.properties.name);
    }
    return plugin::fromHandle<Stream>(stream).appendCopy(Copy::linear(dst, src, count));
}

halError memsetAsync(halPluginStream stream, void* dst, unsigned char value, size_t count) {
    // A one-byte pattern. Level Zero reads the pattern during the append call (the
    // specification asks nothing of its lifetime, unlike the copy operands), so a local will do.
    return plugin::fromHandle<Stream>(stream).appendCommand(
        "zeCommandListAppendMemoryFill", [&](ze_command_list_handle_t list) {
            return ze.zeCommandListAppendMemoryFill.address(list, dst, &value, sizeof value, count,
                                                            nullptr, 0, nullptr);
        });
}

// Sharing device memory with other processes: Level Zero's IPC memory handles (zeMemGetIpcHandle,
// zeMemOpenIpcHandle, zeMemCloseIpcHandle), carried as they are in the plugin's part of polyhal's
// handle. `base` is an allocation exactly as memAllocDevice returned it, which Level Zero
// requires; it is exported once, and its handle put back when it is freed (engine/ipc_exports).
halError ipcMemGetHandle(halPluginDevice device, void* base, halPluginIpcHandle* handle) {
    static_assert(sizeof(ze_ipc_mem_handle_t) <= sizeof handle->bytes,
                  "Level Zero's handle must fit the plugin's part");
    ze_ipc_mem_handle_t exported{};
    if (halError error =
            check(plugin::fromHandle<Device>(device).driver->ipcExports.handleOf(base, &exported),
                  "zeMemGetIpcHandle")) {
        return error;
    }
    std::memset(handle->bytes, 0, sizeof handle->bytes);
    std::memcpy(handle->bytes, &exported, sizeof exported);
    return HAL_SUCCESS;
}

// The mapping belongs to the device's context, as its own allocations do, so copies and fills
// on its streams reach it.
halError ipcMemOpenHandle(halPluginDevice handle, const halPluginIpcHandle* in, size_t /*size*/,
                          void** base) {
    const Device& device = plugin::fromHandle<Device>(handle);
    ze_ipc_mem_handle_t imported;
    std::memcpy(&imported, in->bytes, sizeof imported);
    POLYHAL_ZE_RETURN_IF_ERROR(zeMemOpenIpcHandle, device.driver->context, device.device, imported,
                               0, base);
    return HAL_SUCCESS;
}

halError ipcMemCloseHandle(halPluginDevice device, void* base) {
    POLYHAL_ZE_RETURN_IF_ERROR(zeMemCloseIpcHandle,
                               plugin::fromHandle<Device>(device).driver->context, base);
    return HAL_SUCCESS;
}

}  // namespace polyhal::level_zero
