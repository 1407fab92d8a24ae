// Platform and device entries: loading the vendor runtime, opening devices, describing them.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_PLATFORM_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_PLATFORM_HPP_

#include <cstring>
#include <memory>
#include <new>

#include "gpu_common/objects.hpp"
#include "gpu_common/vendor_call.hpp"
#include "gpu_common/vendor_library.hpp"

namespace polyhal::gpu {

// Opens the vendor library, resolves the symbol table and initialises the runtime. Without the
// library, a symbol, a working driver or a device: HAL_ERROR_NO_DEVICE with the reason.
template <class Api>
halError initialize() noexcept {
    static VendorLibrary library;
    char error[1024];
    if (!library.open(Api::kLibraries, sizeof Api::kLibraries / sizeof *Api::kLibraries, error,
                      sizeof error)) {
        return plugin::fail(HAL_ERROR_NO_DEVICE, "%s was not found: %s", Api::kLibraryDescription,
                            error);
    }
    if (const char* missing = Api::symbols.resolve(library)) {
        return plugin::fail(HAL_ERROR_NO_DEVICE,
                            "%s %s lacks %s: it is older than this backend needs",
                            Api::kLibraryDescription, library.name(), missing);
    }
    const auto& vendor = Api::symbols;
    // Whatever stops the runtime from starting (no device, no kernel driver, a stub library),
    // the backend has no usable device; the vendor's message says which.
    typename Api::Result result = vendor.init.address(0);
    if (result != Api::kSuccess) {
        return failCall<Api>(HAL_ERROR_NO_DEVICE, result, vendor.init.name);
    }
    int count = 0;
    result = vendor.deviceGetCount.address(&count);
    if (result != Api::kSuccess) {
        return failCall<Api>(HAL_ERROR_NO_DEVICE, result, vendor.deviceGetCount.name);
    }
    if (count == 0) {
        return plugin::fail(HAL_ERROR_NO_DEVICE, "%s: no device", vendor.deviceGetCount.name);
    }
    plugin::log(HAL_LOG_INFO, "%s: %d device(s)", library.name(), count);
    return HAL_SUCCESS;
}

template <class Api>
halError deviceGetCount(int* count) noexcept {
    return call<Api>(Api::symbols.deviceGetCount, count);
}

template <class Api>
halError deviceOpen(int ordinal, halPluginDevice* handle) noexcept {
    const auto& vendor = Api::symbols;
    auto device = std::unique_ptr<Device<Api>>(new (std::nothrow) Device<Api>{});
    if (device == nullptr) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "no host memory for device %d", ordinal);
    }
    if (halError error = call<Api>(vendor.deviceGet, &device->native, ordinal)) return error;
    if (halError error = Api::retainContext(device->native, &device->context)) return error;
    halError error = Api::makeCurrent(device->context);
    if (error == HAL_SUCCESS) {
        error = call<Api>(vendor.streamPriorityRange, &device->leastStreamPriority,
                          &device->greatestStreamPriority);
    }
    if (error != HAL_SUCCESS) {
        Api::releaseContext(device->native, device->context);
        return error;
    }
    *handle = toHandle(device.release());
    return HAL_SUCCESS;
}

template <class Api>
void deviceClose(halPluginDevice handle) noexcept {
    std::unique_ptr<Device<Api>> device(fromHandle<Api>(handle));
    Api::releaseContext(device->native, device->context);
}

template <class Api>
halError deviceGetInfo(halPluginDevice handle, halPluginDeviceInfo* info) noexcept {
    const Device<Api>& device = *fromHandle<Api>(handle);
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
    filled.capabilities = HAL_DEVICE_CAP_TIMING_EVENTS | HAL_DEVICE_CAP_HOST_FUNCTIONS |
                          HAL_DEVICE_CAP_KERNELS | HAL_DEVICE_CAP_NATIVE_HANDLES;
    if (device.leastStreamPriority != device.greatestStreamPriority) {
        filled.capabilities |= HAL_DEVICE_CAP_STREAM_PRIORITIES;
    }
    filled.leastStreamPriority = device.leastStreamPriority;
    filled.greatestStreamPriority = device.greatestStreamPriority;
    // A core built against an older, smaller halPluginDeviceInfo gets the members it knows.
    const size_t size = info->size < sizeof filled ? info->size : sizeof filled;
    filled.size = info->size;
    std::memcpy(info, &filled, size);
    return HAL_SUCCESS;
}

template <class Api>
halError deviceSynchronize(halPluginDevice handle) noexcept {
    const Device<Api>& device = *fromHandle<Api>(handle);
    if (halError error = Api::makeCurrent(device.context)) return error;
    return call<Api>(Api::symbols.deviceSynchronize);
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_PLATFORM_HPP_
