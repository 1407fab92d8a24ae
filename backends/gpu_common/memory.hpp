// Memory entries: device and pinned host allocations, copies and fills in stream order, and
// device memory shared with other processes.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_MEMORY_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_MEMORY_HPP_

#include <polyhal/box_rows.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "gpu_common/engine/current_device.hpp"
#include "gpu_common/engine/max_pitch.hpp"
#include "gpu_common/engine/objects.hpp"
#include "gpu_common/engine/vendor_call.hpp"

namespace polyhal::gpu {

// Vendor allocations are aligned to at least 256 bytes, as the contract asks. Memory released
// by memFreeDevice returns to the vendor once the device's free thread has freed it, so an
// allocation that finds the device exhausted waits for the frees queued and tries once more.
template <class Api>
halError memAllocDevice(halPluginDevice handle, size_t size, void** ptr) noexcept {
    const Device<Api>& device = plugin::fromHandle<Device<Api>>(handle);
    const auto& vendor = Api::symbols;
    const CurrentDevice<Api> current(device);
    if (halError error = current.error()) return error;
    typename Api::DevicePointer allocated{};
    typename Api::Result result = vendor.memAlloc.address(&allocated, size);
    if (result != Api::kSuccess) {
        device.frees.drain();
        result = vendor.memAlloc.address(&allocated, size);
    }
    if (result == Api::kSuccess) {
        *ptr = Api::toPointer(allocated);
        device.frees.allocated(*ptr, size);
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

// The vendor's free of this memory waits for the whole device, so it runs on the device's free
// thread (engine/deferred_frees.hpp): the call returns at once, without waiting for any stream.
template <class Api>
halError memFreeDevice(halPluginDevice handle, void* ptr) noexcept {
    const Device<Api>& device = plugin::fromHandle<Device<Api>>(handle);
    const CurrentDevice<Api> current(device);
    if (halError error = current.error()) return error;
    return device.frees.free(device.context, ptr);
}

// Page-locked and portable: fast transfers with every device of the backend.
template <class Api>
halError memAllocHost(halPluginDevice handle, size_t size, void** ptr) noexcept {
    const Device<Api>& device = plugin::fromHandle<Device<Api>>(handle);
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
    const Device<Api>& device = plugin::fromHandle<Device<Api>>(handle);
    const CurrentDevice<Api> current(device);
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.memFreeHost, ptr);
}

// The program's host memory, page-locked for every device of the vendor (PORTABLE), so that
// copies from and to it run asynchronously. Memory the program registered through the vendor
// itself is refused by the vendor (HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED).
template <class Api>
halError memHostRegister(halPluginDevice handle, void* ptr, size_t size) noexcept {
    const CurrentDevice<Api> current(plugin::fromHandle<Device<Api>>(handle));
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.memHostRegister, ptr, size, Api::kHostRegisterPortable);
}

template <class Api>
halError memHostUnregister(halPluginDevice handle, void* ptr) noexcept {
    const CurrentDevice<Api> current(plugin::fromHandle<Device<Api>>(handle));
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.memHostUnregister, ptr);
}

// Attached globally: every stream may use it (cudaMemAttachGlobal, hipMemAttachGlobal).
template <class Api>
halError memAllocManaged(halPluginDevice handle, size_t size, void** ptr) noexcept {
    const CurrentDevice<Api> current(plugin::fromHandle<Device<Api>>(handle));
    if (halError error = current.error()) return error;
    typename Api::DevicePointer allocated{};
    if (halError error =
            call<Api>(Api::symbols.memAllocManaged, &allocated, size, Api::kMemAttachGlobal)) {
        return error;
    }
    *ptr = Api::toPointer(allocated);
    return HAL_SUCCESS;
}

// The core has synchronised the device, so the vendor's free, which waits for it, returns at once
// unless the program has enqueued more work since.
template <class Api>
halError memFreeManaged(halPluginDevice handle, void* ptr) noexcept {
    const CurrentDevice<Api> current(plugin::fromHandle<Device<Api>>(handle));
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.memFree, Api::toDevicePointer(ptr));
}

template <class Api>
halError memcpyAsync(halPluginStream handle, void* dst, const void* src, size_t count,
                     halMemcpyKind kind) noexcept {
    const Stream<Api>& stream = plugin::fromHandle<Stream<Api>>(handle);
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    return Api::memcpyAsync(stream.native, dst, src, count, kind);
}

template <class Api>
halError memsetAsync(halPluginStream handle, void* dst, unsigned char value,
                     size_t count) noexcept {
    const Stream<Api>& stream = plugin::fromHandle<Stream<Api>>(handle);
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.memsetD8Async, Api::toDevicePointer(dst), value, count,
                     stream.native);
}

// A box as one vendor 2-D copy per slice (cuMemcpy2DAsync, hipMemcpy2DAsync): the vendors' 3-D
// copies want a slice pitch that is a whole number of rows, which halMemcpy3D does not. Pitches
// above the device's maximum, which the 2-D copies refuse: a 1-D copy per row.
template <class Api>
halError memcpy3DAsync(halPluginStream handle, const halMemcpy3DParams* box) noexcept {
    const Stream<Api>& stream = plugin::fromHandle<Stream<Api>>(handle);
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    size_t maxPitch = kPitchEveryDeviceTakes;
    if (std::max(box->dstPitch, box->srcPitch) > maxPitch) {
        if (halError error = maxCopyPitch(*stream.device, &maxPitch)) return error;
    }
    auto* dst = static_cast<unsigned char*>(box->dst);
    const auto* src = static_cast<const unsigned char*>(box->src);
    if (box->dstPitch > maxPitch || box->srcPitch > maxPitch) {
        return forEachBoxRow(*box, [&](size_t dstOffset, size_t srcOffset) {
            return Api::memcpyAsync(stream.native, dst + dstOffset, src + srcOffset, box->width,
                                    box->kind);
        });
    }
    for (size_t slice = 0; slice < box->depth; ++slice) {
        if (halError error =
                Api::memcpy2DAsync(stream.native, dst + slice * box->dstSlicePitch, box->dstPitch,
                                   src + slice * box->srcSlicePitch, box->srcPitch, box->width,
                                   box->height, box->kind)) {
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
    const Stream<Api>& stream = plugin::fromHandle<Stream<Api>>(handle);
    const Device<Api>& dstDevice = plugin::fromHandle<Device<Api>>(dstHandle);
    const Device<Api>& srcDevice = plugin::fromHandle<Device<Api>>(srcHandle);
    if (halError error = activate(dstDevice)) return error;
    if (halError error = activate(srcDevice)) return error;
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.memcpyPeerAsync, Api::toDevicePointer(dst), dstDevice.context,
                     Api::toDevicePointer(src), srcDevice.context, count, stream.native);
}

// Free and total bytes as the vendor counts them (other processes' memory included), with the
// memory queued for the free thread counted free: it is released, and an allocation that needs it
// waits for it (memAllocDevice). A block the vendor has just freed may be counted twice until
// the free thread notes it, never beyond the total.
template <class Api>
halError memGetInfo(halPluginDevice handle, size_t* freeBytes, size_t* totalBytes) noexcept {
    const Device<Api>& device = plugin::fromHandle<Device<Api>>(handle);
    const CurrentDevice<Api> current(device);
    if (halError error = current.error()) return error;
    if (halError error = call<Api>(Api::symbols.memGetInfo, freeBytes, totalBytes)) return error;
    *freeBytes = std::min(*totalBytes, *freeBytes + device.frees.queuedBytes());
    return HAL_SUCCESS;
}

// Sharing device memory with other processes: the vendor's IPC memory handles (cuIpcGetMemHandle,
// cuIpcOpenMemHandle, cuIpcCloseMemHandle and HIP's same-named calls). The vendor's handle is
// carried as it is in the plugin's part of polyhal's handle. Drivers that lack the calls leave
// HAL_DEVICE_CAP_IPC_MEMORY unset (deviceGetInfo).
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
    const CurrentDevice<Api> current(plugin::fromHandle<Device<Api>>(handle));
    if (halError error = current.error()) return error;
    typename Api::IpcMemHandle exported{};
    if (halError error =
            call<Api>(Api::symbols.ipcGetMemHandle, &exported, Api::toDevicePointer(base))) {
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
    const CurrentDevice<Api> current(plugin::fromHandle<Device<Api>>(handle));
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
    const CurrentDevice<Api> current(plugin::fromHandle<Device<Api>>(handle));
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.ipcCloseMemHandle, Api::toDevicePointer(base));
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_MEMORY_HPP_
