// Device and page-locked memory, copies and fills.
#include <cstring>

#include "runtime.hpp"

using namespace polyhal::doubles;
using namespace polyhal::doubles::hip;

namespace polyhal::doubles::hip {

// Managed memory is host and device memory at once: any direction fits it.
bool directionMatches(hipMemcpyKind kind, const Place& to, const Place& from) {
    const auto is = [](const Place& place, bool device) {
        return place.kind == Place::kManaged || (place.kind == Place::kDevice) == device;
    };
    switch (kind) {
    case hipMemcpyHostToHost: return is(to, false) && is(from, false);
    case hipMemcpyHostToDevice: return is(to, true) && is(from, false);
    case hipMemcpyDeviceToHost: return is(to, false) && is(from, true);
    case hipMemcpyDeviceToDevice: return is(to, true) && is(from, true);
    case hipMemcpyDefault: return true;
    default: return false;
    }
}

}  // namespace polyhal::doubles::hip

extern "C" {

// ---- Memory ----

hipError_t hipMemGetInfo(size_t* free, size_t* total) {
    ENTER();
    *free = g_memory.heap(currentDevice()).available();
    *total = g_memory.heap(currentDevice()).capacity();
    return hipSuccess;
}

hipError_t hipMalloc(void** pointer, size_t size) {
    ENTER();
    if (pointer == nullptr) return hipErrorInvalidValue;
    if (size == 0) {
        *pointer = nullptr;
        return hipSuccess;
    }
    *pointer = g_memory.heap(currentDevice()).allocate(size);
    return *pointer != nullptr ? hipSuccess : hipErrorOutOfMemory;
}

// ---- Sharing with other processes ----

static_assert(sizeof(IpcName) <= sizeof(hipIpcMemHandle_t), "a name must fit the handle");

// Only the base of a hipMalloc allocation can be exported.
hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t* handle, void* pointer) {
    ENTER();
    if (handle == nullptr) return hipErrorInvalidValue;
    const int owner = g_memory.deviceOf(pointer);
    size_t size = 0;
    if (owner < 0 || !g_memory.heap(owner).startsAllocation(pointer, &size)) {
        breach(kVendor, "hipIpcGetMemHandle: %p is not the base of a live hipMalloc allocation",
               pointer);
    }
    const IpcName name = nameAllocation(g_memory.heap(owner), owner, pointer, size);
    std::memset(handle, 0, sizeof *handle);
    std::memcpy(handle, &name, sizeof name);
    return hipSuccess;
}

// Refused in the process that exported the handle, and once its exporter has exited.
hipError_t hipIpcOpenMemHandle(void** pointer, hipIpcMemHandle_t handle, unsigned int flags) {
    ENTER();
    if (flags != hipIpcMemLazyEnablePeerAccess) {
        breach(kVendor,
               "hipIpcOpenMemHandle: flags must be hipIpcMemLazyEnablePeerAccess (got "
               "%#x)",
               flags);
    }
    if (pointer == nullptr) return hipErrorInvalidValue;
    IpcName name;
    std::memcpy(&name, &handle, sizeof name);
    switch (g_memory.imports().open(name, currentDevice(), pointer)) {
    case IpcOpenStatus::kOpened: return hipSuccess;
    case IpcOpenStatus::kSameProcess: return hipErrorInvalidContext;
    case IpcOpenStatus::kGone:
    case IpcOpenStatus::kNotAName: break;
    }
    return hipErrorInvalidValue;
}

// Only what hipIpcOpenMemHandle returned may be closed.
hipError_t hipIpcCloseMemHandle(void* pointer) {
    ENTER();
    if (!g_memory.imports().close(pointer)) {
        breach(kVendor,
               "hipIpcCloseMemHandle: %p was not opened with hipIpcOpenMemHandle (or "
               "was closed already)",
               pointer);
    }
    return hipSuccess;
}

// clr's ihipFree: waits for every stream of the device that owns the memory, then frees it
// (ROCm/clr hipamd/src/hip_memory.cpp:70-95; the wait is SyncAllStreams, line 80).
static hipError_t freeAfterDevice(int owner, void* pointer) {
    synchronizeDevice(owner);
    return g_memory.heap(owner).release(pointer) ? hipSuccess : hipErrorInvalidValue;
}

// Managed memory waits for the current device, as clr's hipFree does for memory no device heap
// holds.
hipError_t hipFree(void* pointer) {
    ENTER();
    if (pointer == nullptr) return hipSuccess;
    const int owner = g_memory.deviceOf(pointer);
    if (owner >= 0) return freeAfterDevice(owner, pointer);
    synchronizeDevice(currentDevice());
    return g_memory.freeManaged(pointer) ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipMallocManaged(void** pointer, size_t size, unsigned int flags) {
    ENTER();
    if (pointer == nullptr || size == 0 ||
        (flags != hipMemAttachGlobal && flags != hipMemAttachHost)) {
        return hipErrorInvalidValue;
    }
    *pointer = g_memory.allocateManaged(size);
    return *pointer != nullptr ? hipSuccess : hipErrorOutOfMemory;
}

// clr refuses a range of which a byte is registered already (hipErrorHostMemoryAlreadyRegistered)
// and an unregister of a pointer it did not register (hipErrorHostMemoryNotRegistered).
hipError_t hipHostRegister(void* pointer, size_t size, unsigned int flags) {
    ENTER();
    if (pointer == nullptr || size == 0 ||
        (flags & ~(hipHostRegisterPortable | hipHostRegisterMapped | hipHostRegisterIoMemory)) !=
            0) {
        return hipErrorInvalidValue;
    }
    if (g_memory.deviceOf(pointer) >= 0) return hipErrorInvalidValue;
    return g_memory.registerHost(pointer, size) ? hipSuccess : hipErrorHostMemoryAlreadyRegistered;
}

hipError_t hipHostUnregister(void* pointer) {
    ENTER();
    return g_memory.unregisterHost(pointer) ? hipSuccess : hipErrorHostMemoryNotRegistered;
}

// Only memory of a HIP memory pool is released in stream order. The double has no memory pools,
// so every pointer here is one clr's hipFreeAsync hands to ihipFree, "unconditional waits"
// included (ROCm/clr hipamd/src/hip_mempool.cpp:164-172: Device::FreeMemory finds no pool that
// holds the memory): a stream held by a callback holds the call.
hipError_t hipFreeAsync(void* pointer, hipStream_t stream) {
    ENTER();
    if (pointer == nullptr) return hipErrorInvalidValue;
    requireLive(__func__, stream, kStream);
    const int owner = g_memory.deviceOf(pointer);
    if (owner < 0) return hipErrorInvalidValue;
    requireSameDevice(__func__, owner, "the memory", stream->device, "the stream");
    return freeAfterDevice(owner, pointer);
}

hipError_t hipHostMalloc(void** pointer, size_t size, unsigned int flags) {
    ENTER();
    if (pointer == nullptr || size == 0 ||
        (flags & ~(hipHostMallocPortable | hipHostMallocMapped | hipHostMallocWriteCombined)) !=
            0) {
        return hipErrorInvalidValue;
    }
    *pointer = g_memory.allocatePinned(size);
    return *pointer != nullptr ? hipSuccess : hipErrorOutOfMemory;
}

hipError_t hipHostFree(void* pointer) {
    ENTER();
    return g_memory.freePinned(pointer) ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipMemcpyAsync(void* dst, const void* src, size_t count, hipMemcpyKind kind,
                          hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream);
    Place to{};
    Place from{};
    if (!g_memory.locate(dst, count, &to) || !g_memory.locate(src, count, &from)) {
        return hipErrorInvalidValue;
    }
    if (!directionMatches(kind, to, from)) return hipErrorInvalidMemcpyDirection;
    polyhal::doubles::submitCopy(stream->timeline, to, from, count);
    return hipSuccess;
}

hipError_t hipMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                            size_t height, hipMemcpyKind kind, hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream);
    // As the runtime: no pitch above hipDeviceAttributeMaxPitch.
    if (width > dpitch || width > spitch || dpitch > static_cast<size_t>(kMaxPitch) ||
        spitch > static_cast<size_t>(kMaxPitch)) {
        return hipErrorInvalidPitchValue;
    }
    if (width == 0 || height == 0) return hipSuccess;
    Place to{};
    Place from{};
    if (!g_memory.locate(dst, dpitch * (height - 1) + width, &to) ||
        !g_memory.locate(src, spitch * (height - 1) + width, &from)) {
        return hipErrorInvalidValue;
    }
    if (!directionMatches(kind, to, from)) return hipErrorInvalidMemcpyDirection;
    polyhal::doubles::submitCopy2D(stream->timeline, to, dpitch, from, spitch, width, height);
    return hipSuccess;
}

hipError_t hipMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                              size_t count, hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream);
    Place to{};
    Place from{};
    if (!validDevice(dstDevice) || !validDevice(srcDevice)) return hipErrorInvalidDevice;
    if (!g_memory.locate(dst, count, &to) || !g_memory.locate(src, count, &from)) {
        return hipErrorInvalidValue;
    }
    if (to.kind != Place::kDevice || from.kind != Place::kDevice) return hipErrorInvalidValue;
    requireSameDevice(__func__, to.device, "the destination", dstDevice, "dstDevice");
    requireSameDevice(__func__, from.device, "the source", srcDevice, "srcDevice");
    polyhal::doubles::submitCopy(stream->timeline, to, from, count);
    return hipSuccess;
}

// Pageable memory, which the runtime does not know, is hipErrorInvalidValue (HIP 5; HIP 6
// answers hipMemoryTypeUnregistered with no device pointer instead).
hipError_t hipPointerGetAttributes(hipPointerAttribute_t* attributes, const void* pointer) {
    ENTER();
    if (attributes == nullptr) return hipErrorInvalidValue;
    Place place{};
    if (!g_memory.locate(pointer, 1, &place) || place.kind == Place::kPageable) {
        return hipErrorInvalidValue;
    }
    *attributes = {};
    const bool device = place.kind == Place::kDevice;
    attributes->memoryType = device ? hipMemoryTypeDevice : hipMemoryTypeHost;
    attributes->device = device ? place.device : currentDevice();
    attributes->devicePointer = const_cast<void*>(pointer);
    attributes->hostPointer = device ? nullptr : const_cast<void*>(pointer);
    return hipSuccess;
}

// Device or page-locked memory; pageable host memory is refused as the runtime refuses it.
hipError_t hipMemsetD8Async(hipDeviceptr_t dst, unsigned char value, size_t count,
                            hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream);
    Place to{};
    if (!g_memory.locate(dst, count, &to) || to.kind == Place::kPageable) {
        return hipErrorInvalidValue;
    }
    polyhal::doubles::submitFill(stream->timeline, to, value, count);
    return hipSuccess;
}

}  // extern "C"
