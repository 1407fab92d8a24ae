// Devices and contexts: the primary context of each device, and each thread's context stack.
#include <cstdio>

#include "driver.hpp"

using namespace polyhal::doubles;
using namespace polyhal::doubles::cuda;

extern "C" {

// ---- Devices ----

CUresult CUDAAPI cuDeviceGetCount(int* count) {
    ENTER();
    *count = static_cast<int>(g_devices.size());
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
    ENTER();
    if (ordinal < 0 || ordinal >= static_cast<int>(g_devices.size()))
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char* name, int length, CUdevice device) {
    ENTER();
    if (!validDevice(device)) return CUDA_ERROR_INVALID_DEVICE;
    if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
    std::snprintf(name, static_cast<size_t>(length), "polyhal CUDA driver double %d", device);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice device) {
    ENTER();
    if (!validDevice(device)) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = g_memory.heap(device).capacity();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
    ENTER();
    if (!validDevice(device)) return CUDA_ERROR_INVALID_DEVICE;
    switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 4; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = kMaxThreadsPerBlock; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = kDefaultMaxDynamicShared; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = kOptInMaxShared; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *value = 1; break;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: *value = 1; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *value = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: *value = kMaxPitch; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = kComputeCapabilityMajor; break;
#if POLYHAL_CUDA_DOUBLE_VERSION >= 12000
    case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED: *value = ipcEventsSupported(device); break;
#endif
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceCanAccessPeer(int* canAccess, CUdevice device, CUdevice peer) {
    ENTER();
    if (!validDevice(device) || !validDevice(peer)) return CUDA_ERROR_INVALID_DEVICE;
    *canAccess = device != peer;
    return CUDA_SUCCESS;
}

// ---- Peer access ----

// From the current context to `peer`'s memory, as cuDeviceCanAccessPeer allows; once.
CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
    ENTER();
    CUctx_st* context = requireCurrent(__func__);
    requireLive(__func__, peer, kContext);
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (peer == context) return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    std::lock_guard<std::mutex> lock(context->mutex);
    if (!context->peers.insert(peer).second) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peer) {
    ENTER();
    CUctx_st* context = requireCurrent(__func__);
    requireLive(__func__, peer, kContext);
    std::lock_guard<std::mutex> lock(context->mutex);
    if (context->peers.erase(peer) == 0) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    return CUDA_SUCCESS;
}

// ---- Contexts ----

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
    ENTER();
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!validDevice(device)) return CUDA_ERROR_INVALID_DEVICE;
    Device& state = g_devices[static_cast<size_t>(device)];
    if (state.retains++ == 0) {
        state.primary = std::make_unique<CUctx_st>();
        state.primary->device = device;
        g_handles.add(state.primary.get(), kContext);
    }
    *context = state.primary.get();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice device) {
    ENTER();
    std::unique_ptr<CUctx_st> released;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (!validDevice(device)) return CUDA_ERROR_INVALID_DEVICE;
        Device& state = g_devices[static_cast<size_t>(device)];
        if (state.retains == 0) {
            breach(kVendor,
                   "cuDevicePrimaryCtxRelease: device %d's primary context is not "
                   "retained",
                   device);
        }
        if (--state.retains == 0) released = std::move(state.primary);
    }
    if (released) destroyContext(std::move(released));
    return CUDA_SUCCESS;
}

// "Destroy all allocations and reset all state on the primary context ... Resetting the primary
// context does not release it" (cuDevicePrimaryCtxReset's reference): its streams, events and
// modules are gone (using their handles afterwards is a breach), its memory is freed, its peer
// access and a kept fault cleared. Resetting a context never retained does nothing.
CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice device) {
    ENTER();
    CUctx_st* context = nullptr;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (!validDevice(device)) return CUDA_ERROR_INVALID_DEVICE;
        context = g_devices[static_cast<size_t>(device)].primary.get();
    }
    if (context != nullptr) resetContext(context);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice device, unsigned* flags, int* active) {
    ENTER();
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!validDevice(device)) return CUDA_ERROR_INVALID_DEVICE;
    *flags = 0;
    *active = g_devices[static_cast<size_t>(device)].retains > 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* context) {
    ENTER();
    *context = currentContext();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext context) {
    ENTER();
    if (context != nullptr) requireLive(__func__, context, kContext);
    if (context == nullptr) {
        if (!contextStack().empty()) contextStack().pop_back();
    } else if (contextStack().empty()) {
        contextStack().push_back(context);
    } else {
        contextStack().back() = context;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext context) {
    ENTER();
    requireLive(__func__, context, kContext);
    for (int failing = g_failingPushes.load(); failing > 0;) {
        if (g_failingPushes.compare_exchange_weak(failing, failing - 1)) {
            return CUDA_ERROR_INVALID_CONTEXT;
        }
    }
    contextStack().push_back(context);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext* context) {
    ENTER();
    if (contextStack().empty()) return CUDA_ERROR_INVALID_CONTEXT;
    if (context != nullptr) *context = contextStack().back();
    contextStack().pop_back();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
    ENTER();
    *device = requireCurrent(__func__)->device;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetStreamPriorityRange(int* least, int* greatest) {
    ENTER();
    requireCurrent(__func__);
    if (least != nullptr) *least = kLeastPriority;
    if (greatest != nullptr) *greatest = kGreatestPriority;
    return CUDA_SUCCESS;
}

// Waits for every stream of the current context, destroyed ones still draining included.
CUresult CUDAAPI cuCtxSynchronize() {
    ENTER_UNSAFE_DURING_CAPTURE();
    CUctx_st* context = requireCurrent(__func__);
    std::vector<std::shared_ptr<CUstream_st>> streams;
    {
        std::lock_guard<std::mutex> lock(context->mutex);
        streams = context->streams;
    }
    for (const auto& stream : streams) stream->timeline.synchronize();
    return context->sticky.load();
}

}  // extern "C"
