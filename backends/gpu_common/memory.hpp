// Memory entries: device and pinned host allocations, copies and fills in stream order.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_MEMORY_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_MEMORY_HPP_

#include <cstdio>

#include "gpu_common/objects.hpp"
#include "gpu_common/vendor_call.hpp"

namespace polyhal::gpu {

// Vendor allocations are aligned to at least 256 bytes, as the contract asks.
template <class Api>
halError memAllocDevice(halPluginDevice handle, size_t size, void** ptr) noexcept {
    const Device<Api>& device = *fromHandle<Api>(handle);
    const auto& vendor = Api::symbols;
    if (halError error = Api::makeCurrent(device.context)) return error;
    typename Api::DevicePointer allocated{};
    const typename Api::Result result = vendor.memAlloc.address(&allocated, size);
    if (result == Api::kSuccess) {
        *ptr = Api::toPointer(allocated);
        return HAL_SUCCESS;
    }
    // Say how much was asked for and how much the device has left.
    char detail[128];
    size_t free = 0;
    size_t total = 0;
    if (vendor.memGetInfo.address(&free, &total) == Api::kSuccess) {
        std::snprintf(detail, sizeof detail, "requested %zu bytes, %zu of %zu bytes free", size,
                      free, total);
    } else {
        std::snprintf(detail, sizeof detail, "requested %zu bytes", size);
    }
    return failCall<Api>(Api::toHalError(result), result, vendor.memAlloc.name, detail);
}

template <class Api>
halError memFreeDevice(halPluginDevice handle, void* ptr) noexcept {
    const Device<Api>& device = *fromHandle<Api>(handle);
    if (halError error = Api::makeCurrent(device.context)) return error;
    return call<Api>(Api::symbols.memFree, Api::toDevicePointer(ptr));
}

// Page-locked and portable: fast transfers with every device of the backend.
template <class Api>
halError memAllocHost(halPluginDevice handle, size_t size, void** ptr) noexcept {
    const Device<Api>& device = *fromHandle<Api>(handle);
    const auto& vendor = Api::symbols;
    if (halError error = Api::makeCurrent(device.context)) return error;
    const typename Api::Result result =
        vendor.memAllocHost.address(ptr, size, Api::kHostAllocPortable);
    if (result == Api::kSuccess) return HAL_SUCCESS;
    char detail[64];
    std::snprintf(detail, sizeof detail, "requested %zu bytes", size);
    return failCall<Api>(Api::toHalError(result), result, vendor.memAllocHost.name, detail);
}

template <class Api>
halError memFreeHost(halPluginDevice handle, void* ptr) noexcept {
    const Device<Api>& device = *fromHandle<Api>(handle);
    if (halError error = Api::makeCurrent(device.context)) return error;
    return call<Api>(Api::symbols.memFreeHost, ptr);
}

template <class Api>
halError memcpyAsync(halPluginStream handle, void* dst, const void* src, size_t count,
                     halMemcpyKind kind) noexcept {
    const Stream<Api>& stream = *fromHandle<Api>(handle);
    if (halError error = Api::makeCurrent(stream.device->context)) return error;
    return Api::memcpyAsync(stream.native, dst, src, count, kind);
}

template <class Api>
halError memsetAsync(halPluginStream handle, void* dst, unsigned char value,
                     size_t count) noexcept {
    const Stream<Api>& stream = *fromHandle<Api>(handle);
    if (halError error = Api::makeCurrent(stream.device->context)) return error;
    return call<Api>(Api::symbols.memsetD8Async, Api::toDevicePointer(dst), value, count,
                     stream.native);
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_MEMORY_HPP_
