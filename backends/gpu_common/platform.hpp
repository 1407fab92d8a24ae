// Platform and device entries: loading the vendor runtime, opening devices, describing them.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_PLATFORM_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_PLATFORM_HPP_

#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "gpu_common/current_device.hpp"
#include "gpu_common/ipc.hpp"
#include "gpu_common/objects.hpp"
#include "gpu_common/vendor_call.hpp"
#include "support/dynamic_library.hpp"

namespace polyhal::gpu {

// Opens the vendor library, resolves the symbol table and initialises the runtime. Without the
// library, a symbol, a working driver or a device: HAL_ERROR_NO_DEVICE with the reason.
template <class Api>
halError initialize() noexcept {
    static DynamicLibrary library;
    std::string error;
    library = DynamicLibrary::openFirst(Api::kLibraries,
                                        sizeof Api::kLibraries / sizeof *Api::kLibraries, &error);
    if (!library) {
        return plugin::fail(HAL_ERROR_NO_DEVICE, "%s was not found: %s", Api::kLibraryDescription,
                            error.c_str());
    }
    library.keepLoaded();
    if (const char* missing = Api::symbols.resolve(library)) {
        return plugin::fail(HAL_ERROR_NO_DEVICE,
                            "%s %s lacks %s: it is older than this backend needs",
                            Api::kLibraryDescription, library.name().c_str(), missing);
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
    plugin::log(HAL_LOG_INFO, "%s: %d device(s)", library.name().c_str(), count);
    return HAL_SUCCESS;
}

template <class Api>
halError deviceGetCount(int* count) noexcept {
    return call<Api>(Api::symbols.deviceGetCount, count);
}

// Opening a device costs nothing: it is activated on its first use (current_device.hpp).
template <class Api>
halError deviceOpen(int ordinal, halPluginDevice* handle) noexcept {
    auto device = std::unique_ptr<Device<Api>>(new (std::nothrow) Device<Api>{});
    if (device == nullptr) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "no host memory for device %d", ordinal);
    }
    if (halError error = call<Api>(Api::symbols.deviceGet, &device->native, ordinal)) return error;
    *handle = toHandle(device.release());
    return HAL_SUCCESS;
}

// The core closes a device once its objects are destroyed; releases still queued finish first.
template <class Api>
void deviceClose(halPluginDevice handle) noexcept {
    std::unique_ptr<Device<Api>> device(fromHandle<Api>(handle));
    if (!device->active) return;
    const auto& vendor = Api::symbols;
    if (device->releaseStream != nullptr) {
        const ContextScope<Api> scope(device->context);
        // deviceClose cannot report a failure, which only a dying driver returns here.
        if (scope.error() == HAL_SUCCESS) {
            (void)vendor.streamSynchronize.address(device->releaseStream);
            (void)vendor.streamDestroy.address(device->releaseStream);
        }
    }
    Api::releaseContext(device->native, device->context);
}

// The stream priority range is a property of a context. A device not yet in use lends its
// context for the query only (CUDA: retained and released again, so a device never used holds
// no memory afterwards); a device whose context cannot be had (one in exclusive-process mode
// that another process holds) reports no priorities rather than failing.
template <class Api>
void queryStreamPriorities(const Device<Api>& device, int* least, int* greatest) noexcept {
    *least = *greatest = 0;
    typename Api::Context context{};
    if (Api::retainContext(device.native, &context) != HAL_SUCCESS) {
        plugin::log(HAL_LOG_WARN, "device %d: no stream priorities: its context is unavailable",
                    static_cast<int>(device.native));
        return;
    }
    {
        const ContextScope<Api> scope(context);
        if (scope.error() != HAL_SUCCESS ||
            Api::symbols.streamPriorityRange.address(least, greatest) != Api::kSuccess) {
            *least = *greatest = 0;
        }
    }
    Api::releaseContext(device.native, context);
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
                          HAL_DEVICE_CAP_KERNELS | HAL_DEVICE_CAP_NATIVE_HANDLES |
                          HAL_DEVICE_CAP_PEER_COPY;
    if (hasIpcMemory<Api>()) filled.capabilities |= HAL_DEVICE_CAP_IPC_MEMORY;
    queryStreamPriorities(device, &filled.leastStreamPriority, &filled.greatestStreamPriority);
    if (filled.leastStreamPriority != filled.greatestStreamPriority) {
        filled.capabilities |= HAL_DEVICE_CAP_STREAM_PRIORITIES;
    }
    // A core built against an older, smaller halPluginDeviceInfo gets the members it knows.
    const size_t size = info->size < sizeof filled ? info->size : sizeof filled;
    filled.size = info->size;
    std::memcpy(info, &filled, size);
    return HAL_SUCCESS;
}

template <class Api>
halError deviceSynchronize(halPluginDevice handle) noexcept {
    const CurrentDevice<Api> current(*fromHandle<Api>(handle));
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.deviceSynchronize);
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_PLATFORM_HPP_
