// Memory entries: device and pinned host allocations, copies and fills in stream order.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_MEMORY_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_MEMORY_HPP_

#include <cstdio>

#include "gpu_common/current_device.hpp"
#include "gpu_common/objects.hpp"
#include "gpu_common/vendor_call.hpp"

namespace polyhal::gpu {

// Vendor allocations are aligned to at least 256 bytes, as the contract asks. Memory released
// in stream order (memFreeDevice) returns to the vendor once the release stream reaches it, so
// an allocation that finds the device exhausted waits for those releases and tries once more.
template <class Api>
halError memAllocDevice(halPluginDevice handle, size_t size, void** ptr) noexcept {
    const Device<Api>& device = *fromHandle<Api>(handle);
    const auto& vendor = Api::symbols;
    const CurrentDevice<Api> current(device);
    if (halError error = current.error()) return error;
    typename Api::DevicePointer allocated{};
    typename Api::Result result = vendor.memAlloc.address(&allocated, size);
    if (result != Api::kSuccess && device.releaseStream != nullptr &&
        vendor.streamSynchronize.address(device.releaseStream) == Api::kSuccess) {
        result = vendor.memAlloc.address(&allocated, size);
    }
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

// The core guarantees that no submitted work uses the memory any more, so it is released on the
// device's own release stream (cuMemFreeAsync, hipFreeAsync), which waits for nothing else: the
// call returns at once and no other stream is synchronised. Where the vendor lacks stream-ordered
// release (CUDA before 11.2) or the device does (no memory-pool support), the vendor's plain free
// is used, and it waits for the whole device.
template <class Api>
halError memFreeDevice(halPluginDevice handle, void* ptr) noexcept {
    const Device<Api>& device = *fromHandle<Api>(handle);
    const CurrentDevice<Api> current(device);
    if (halError error = current.error()) return error;
    if (device.releaseStream != nullptr) {
        return call<Api>(Api::symbols.memFreeAsync, Api::toDevicePointer(ptr),
                         device.releaseStream);
    }
    return call<Api>(Api::symbols.memFree, Api::toDevicePointer(ptr));
}

// Page-locked and portable: fast transfers with every device of the backend.
template <class Api>
halError memAllocHost(halPluginDevice handle, size_t size, void** ptr) noexcept {
    const Device<Api>& device = *fromHandle<Api>(handle);
    const auto& vendor = Api::symbols;
    const CurrentDevice<Api> current(device);
    if (halError error = current.error()) return error;
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
    const CurrentDevice<Api> current(device);
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.memFreeHost, ptr);
}

template <class Api>
halError memcpyAsync(halPluginStream handle, void* dst, const void* src, size_t count,
                     halMemcpyKind kind) noexcept {
    const Stream<Api>& stream = *fromHandle<Api>(handle);
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    return Api::memcpyAsync(stream.native, dst, src, count, kind);
}

template <class Api>
halError memsetAsync(halPluginStream handle, void* dst, unsigned char value,
                     size_t count) noexcept {
    const Stream<Api>& stream = *fromHandle<Api>(handle);
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.memsetD8Async, Api::toDevicePointer(dst), value, count,
                     stream.native);
}

// A box as one vendor 2-D copy per slice (cuMemcpy2DAsync, hipMemcpy2DAsync): the vendors' 3-D
// copies want a slice pitch that is a whole number of rows, which halMemcpy3D does not.
template <class Api>
halError memcpy3DAsync(halPluginStream handle, const halMemcpy3DParams* box) noexcept {
    const Stream<Api>& stream = *fromHandle<Api>(handle);
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    auto* dst = static_cast<unsigned char*>(box->dst);
    const auto* src = static_cast<const unsigned char*>(box->src);
    for (size_t slice = 0; slice < box->depth; ++slice) {
        if (halError error = Api::memcpy2DAsync(
                stream.native, dst + slice * box->dstSlicePitch, box->dstPitch,
                src + slice * box->srcSlicePitch, box->srcPitch, box->width, box->height,
                box->kind)) {
            return error;
        }
    }
    return HAL_SUCCESS;
}

// Between two devices of this plugin, through the vendor's peer path (no host staging), in the
// order of `stream`, a stream of either device.
template <class Api>
halError memcpyPeerAsync(halPluginStream handle, void* dst, halPluginDevice dstHandle,
                         const void* src, halPluginDevice srcHandle, size_t count) noexcept {
    const Stream<Api>& stream = *fromHandle<Api>(handle);
    const Device<Api>& dstDevice = *fromHandle<Api>(dstHandle);
    const Device<Api>& srcDevice = *fromHandle<Api>(srcHandle);
    if (halError error = activate(dstDevice)) return error;
    if (halError error = activate(srcDevice)) return error;
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.memcpyPeerAsync, Api::toDevicePointer(dst), dstDevice.context,
                     Api::toDevicePointer(src), srcDevice.context, count, stream.native);
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_MEMORY_HPP_
