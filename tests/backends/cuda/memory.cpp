// Device and page-locked memory, copies and fills.
#include <cstdlib>
#include <cstring>

#include "driver.hpp"

using namespace polyhal::doubles;
using namespace polyhal::doubles::cuda;

extern "C" {

// ---- Memory ----

CUresult CUDAAPI cuMemGetInfo(size_t* free, size_t* total) {
    ENTER();
    const DeviceHeap& heap = g_memory.heap(requireCurrent(__func__)->device);
    *free = heap.available();
    *total = heap.capacity();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr* pointer, size_t size) {
    ENTER_UNSAFE_DURING_CAPTURE();
    CUctx_st* context = requireCurrent(__func__);
    if (size == 0) return CUDA_ERROR_INVALID_VALUE;
    void* allocated = g_memory.heap(context->device).allocate(size);
    if (allocated == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    *pointer = reinterpret_cast<uintptr_t>(allocated);
    return CUDA_SUCCESS;
}

// The memory must belong to the current context's device, or be managed memory.
static CUresult releaseDeviceMemory(const char* function, CUctx_st* context, CUdeviceptr pointer) {
    const int owner = g_memory.deviceOf(toPointer(pointer));
    if (owner < 0) {
        return g_memory.freeManaged(toPointer(pointer)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    }
    if (owner != context->device) {
        breach(kVendor,
               "%s: %p is memory of another device than the current context's (device "
               "%d)",
               function, toPointer(pointer), context->device);
    }
    return g_memory.heap(owner).release(toPointer(pointer)) ? CUDA_SUCCESS
                                                            : CUDA_ERROR_INVALID_VALUE;
}

// cuMemFree synchronises the device: it returns once every stream of the context is idle.
CUresult CUDAAPI cuMemFree(CUdeviceptr pointer) {
    ENTER();
    CUctx_st* context = requireCurrent(__func__);
    if (CUresult synchronized = cuCtxSynchronize()) return synchronized;
    return releaseDeviceMemory(__func__, context, pointer);
}

#if POLYHAL_CUDA_DOUBLE_VERSION >= 11020
// NVIDIA documents stream-ordered frees for stream-ordered allocations only (the CUDA Programming
// Guide, "Stream Ordered Memory Allocator": cudaMalloc and cudaFree "cause the GPU to synchronize
// across all executing CUDA streams"; cuMemFreeAsync's reference describes the free of a
// stream-ordered allocation). The double has no memory pools, so every pointer here is cuMemAlloc
// memory, and its free synchronises as cuMemFree does: a stream held by a host function holds
// the call.
CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr pointer, CUstream streamHandle) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, streamHandle);
    Place place{};
    if (!g_memory.locate(toPointer(pointer), 1, &place) || place.kind != Place::kDevice) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (place.device != stream->context->device) {
        breach(kVendor, "cuMemFreeAsync: %p is memory of device %d, the stream is of device %d",
               toPointer(pointer), place.device, stream->context->device);
    }
    return cuMemFree(pointer);
}
#endif

// ---- Sharing with other processes ----

static_assert(sizeof(IpcName) <= sizeof(CUipcMemHandle), "a name must fit the driver's handle");

// Only the base of a cuMemAlloc allocation can be exported (the driver's documented rule).
CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle* handle, CUdeviceptr pointer) {
    ENTER();
    requireCurrent(__func__);
    if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const int owner = g_memory.deviceOf(toPointer(pointer));
    size_t size = 0;
    if (owner < 0 || !g_memory.heap(owner).startsAllocation(toPointer(pointer), &size)) {
        breach(kVendor, "cuIpcGetMemHandle: %p is not the base of a live cuMemAlloc allocation",
               toPointer(pointer));
    }
    const IpcName name = nameAllocation(g_memory.heap(owner), owner, toPointer(pointer), size);
    std::memset(handle, 0, sizeof *handle);
    std::memcpy(handle, &name, sizeof name);
    return CUDA_SUCCESS;
}

// Opening a handle in the process that exported it is refused, as the driver refuses it; so is
// one whose exporter has exited.
CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr* pointer, CUipcMemHandle handle,
                                    unsigned int flags) {
    ENTER();
    CUctx_st* context = requireCurrent(__func__);
    if (flags != CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) {
        breach(kVendor,
               "cuIpcOpenMemHandle: flags must be CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS "
               "(got %#x)",
               flags);
    }
    if (pointer == nullptr) return CUDA_ERROR_INVALID_VALUE;
    IpcName name;
    std::memcpy(&name, &handle, sizeof name);
    void* base = nullptr;
    switch (g_memory.imports().open(name, context->device, &base)) {
    case IpcOpenStatus::kOpened: *pointer = reinterpret_cast<uintptr_t>(base); return CUDA_SUCCESS;
    case IpcOpenStatus::kSameProcess: return CUDA_ERROR_INVALID_CONTEXT;
    case IpcOpenStatus::kGone:
    case IpcOpenStatus::kNotAName: break;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

// Only what cuIpcOpenMemHandle returned may be closed.
CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr pointer) {
    ENTER();
    requireCurrent(__func__);
    if (!g_memory.imports().close(toPointer(pointer))) {
        breach(kVendor,
               "cuIpcCloseMemHandle: %p was not opened with cuIpcOpenMemHandle (or was "
               "closed already)",
               toPointer(pointer));
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostAlloc(void** pointer, size_t size, unsigned int flags) {
    ENTER();
    requireCurrent(__func__);
    if (size == 0 || (flags & ~(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
                                CU_MEMHOSTALLOC_WRITECOMBINED)) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    void* allocated = g_memory.allocatePinned(size);
    if (allocated == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    *pointer = allocated;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFreeHost(void* pointer) {
    ENTER();
    requireCurrent(__func__);
    return g_memory.freePinned(pointer) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// The driver's rules (cuMemHostRegister's reference): flags of CU_MEMHOSTREGISTER_* only, and a
// range of which no byte is page-locked already. The double has no IOMMU mapping to make: the
// range becomes page-locked memory to the copy rules.
CUresult CUDAAPI cuMemHostRegister(void* pointer, size_t size, unsigned int flags) {
    ENTER();
    requireCurrent(__func__);
    if (pointer == nullptr || size == 0 ||
        (flags & ~(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                   CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY)) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (g_memory.deviceOf(pointer) >= 0) return CUDA_ERROR_INVALID_VALUE;
    return g_memory.registerHost(pointer, size) ? CUDA_SUCCESS
                                                : CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
}

CUresult CUDAAPI cuMemHostUnregister(void* pointer) {
    ENTER();
    requireCurrent(__func__);
    return g_memory.unregisterHost(pointer) ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

// Managed memory is freed with cuMemFree, which synchronises the device as for any memory.
CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr* pointer, size_t size, unsigned int flags) {
    ENTER_UNSAFE_DURING_CAPTURE();
    requireCurrent(__func__);
    if (pointer == nullptr || size == 0 ||
        (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    void* allocated = g_memory.allocateManaged(size);
    if (allocated == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    *pointer = reinterpret_cast<uintptr_t>(allocated);
    return CUDA_SUCCESS;
}

// Copies follow the driver's documented host synchronisation (submitCopy).
static CUresult copyAsync(CUstream_st* stream, void* dst, const void* src, size_t count) {
    Place to{};
    Place from{};
    if (!g_memory.locate(dst, count, &to) || !g_memory.locate(src, count, &from)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (CUresult sticky = stream->context->sticky.load()) return sticky;
    polyhal::doubles::submitCopy(stream->timeline, to, from, count);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t count, CUstream stream) {
    ENTER();
    return copyAsync(requireStream(__func__, stream), toPointer(dst), toPointer(src), count);
}

CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dstContext, CUdeviceptr src,
                                   CUcontext srcContext, size_t count, CUstream streamHandle) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, streamHandle);
    requireLive(__func__, dstContext, kContext);
    requireLive(__func__, srcContext, kContext);
    Place to{};
    Place from{};
    if (!g_memory.locate(toPointer(dst), count, &to) ||
        !g_memory.locate(toPointer(src), count, &from)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (to.kind != Place::kDevice || to.device != dstContext->device) {
        breach(kVendor, "cuMemcpyPeerAsync: the destination is not memory of dstContext's device");
    }
    if (from.kind != Place::kDevice || from.device != srcContext->device) {
        breach(kVendor, "cuMemcpyPeerAsync: the source is not memory of srcContext's device");
    }
    polyhal::doubles::submitCopy(stream->timeline, to, from, count);
    return CUDA_SUCCESS;
}

}  // extern "C"

namespace polyhal::doubles::cuda {

// Arrays are not something polyhal uses.
CUresult locateRows(const char* function, const char* end, CUmemorytype type, const void* host,
                    CUdeviceptr device, size_t x, size_t y, size_t pitch, size_t width, size_t rows,
                    Place* place) {
    const void* base = nullptr;
    switch (type) {
    case CU_MEMORYTYPE_HOST: base = host; break;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED: base = toPointer(device); break;
    default:
        breach(kVendor, "%s: %s memory type %d is not host, device or unified memory", function,
               end, static_cast<int>(type));
    }
    const auto* first = static_cast<const unsigned char*>(base) + y * pitch + x;
    if (!g_memory.locate(first, pitch * (rows - 1) + width, place)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (type == CU_MEMORYTYPE_DEVICE && place->kind != Place::kDevice &&
        place->kind != Place::kManaged) {
        breach(kVendor, "%s: the %s is said to be device memory, but %p is host memory", function,
               end, static_cast<const void*>(first));
    }
    if (type == CU_MEMORYTYPE_HOST && place->kind == Place::kDevice) {
        breach(kVendor, "%s: the %s is said to be host memory, but %p is device memory", function,
               end, static_cast<const void*>(first));
    }
    return CUDA_SUCCESS;
}

}  // namespace polyhal::doubles::cuda

extern "C" {

CUresult CUDAAPI cuMemcpy2DAsync(const CUDA_MEMCPY2D* copy, CUstream streamHandle) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, streamHandle);
    // As the driver: no pitch above CU_DEVICE_ATTRIBUTE_MAX_PITCH.
    if (copy == nullptr || copy->WidthInBytes > copy->srcPitch ||
        copy->WidthInBytes > copy->dstPitch || copy->srcPitch > static_cast<size_t>(kMaxPitch) ||
        copy->dstPitch > static_cast<size_t>(kMaxPitch)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (copy->WidthInBytes == 0 || copy->Height == 0) return CUDA_SUCCESS;
    Place to{};
    Place from{};
    if (CUresult located = locateRows(__func__, "destination", copy->dstMemoryType, copy->dstHost,
                                      copy->dstDevice, copy->dstXInBytes, copy->dstY,
                                      copy->dstPitch, copy->WidthInBytes, copy->Height, &to)) {
        return located;
    }
    if (CUresult located = locateRows(__func__, "source", copy->srcMemoryType, copy->srcHost,
                                      copy->srcDevice, copy->srcXInBytes, copy->srcY,
                                      copy->srcPitch, copy->WidthInBytes, copy->Height, &from)) {
        return located;
    }
    if (CUresult sticky = stream->context->sticky.load()) return sticky;
    polyhal::doubles::submitCopy2D(stream->timeline, to, copy->dstPitch, from, copy->srcPitch,
                                   copy->WidthInBytes, copy->Height);
    return CUDA_SUCCESS;
}

// Only CU_POINTER_ATTRIBUTE_MEMORY_TYPE: device or page-locked host memory; pageable memory,
// which the driver does not know, is CUDA_ERROR_INVALID_VALUE, as the driver returns it.
CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute,
                                       CUdeviceptr pointer) {
    ENTER();
    if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (attribute != CU_POINTER_ATTRIBUTE_MEMORY_TYPE) return CUDA_ERROR_NOT_SUPPORTED;
    Place place{};
    if (!g_memory.locate(toPointer(pointer), 1, &place) || place.kind == Place::kPageable) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *static_cast<unsigned*>(data) =
        place.kind == Place::kDevice ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    return CUDA_SUCCESS;
}

// Device memory, or page-locked host memory (mapped for the device under unified addressing);
// pageable host memory is refused as the driver refuses it.
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count,
                                 CUstream streamHandle) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, streamHandle);
    Place to{};
    if (!g_memory.locate(toPointer(dst), count, &to) || to.kind == Place::kPageable) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (CUresult sticky = stream->context->sticky.load()) return sticky;
    polyhal::doubles::submitFill(stream->timeline, to, value, count);
    return CUDA_SUCCESS;
}

}  // extern "C"
