// The CUDA driver API as the shared GPU layer sees it (requirements in
// gpu_common/dispatch_table.hpp): its types and constants, and what CUDA does its own way.
#ifndef POLYHAL_BACKENDS_CUDA_API_HPP_
#define POLYHAL_BACKENDS_CUDA_API_HPP_

#include <polyhal/plugin.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "gpu_common/engine/api_contract.hpp"
#include "gpu_common/engine/graph_node.hpp"
#include "gpu_common/engine/kernel_parameters.hpp"
#include "gpu_common/engine/vendor_call.hpp"
#include "symbols.hpp"

namespace polyhal::cuda {

struct CudaApi {
    static constexpr const char* kName = "cuda";
    static constexpr const char* kLibraries[] = {"libcuda.so.1"};
    static constexpr const char* kLibraryDescription = "the NVIDIA driver library";
    // What backendGetInfo reports: chosen first automatically; kDLCUDA; PTX (JIT-compiled for
    // any GPU) before the binaries built for one architecture.
    static constexpr uint32_t kSelectionPriority = 300;
    static constexpr int32_t kDLPackDeviceType = 2;
    static constexpr const char* kModuleImageKinds = "ptx,cubin,fatbin";

    using Result = CUresult;
    static constexpr Result kSuccess = CUDA_SUCCESS;
    static constexpr Result kNotReady = CUDA_ERROR_NOT_READY;
    static constexpr Result kPeerAccessAlreadyEnabled = CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    static constexpr Result kPeerAccessNotEnabled = CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;

    using NativeDevice = CUdevice;
    // A device is made current through its primary context, the one the CUDA runtime and
    // libraries built on it (cuBLAS, PyTorch) use, so memory and streams interoperate.
    using Context = CUcontext;
    using Stream = CUstream;
    using Event = CUevent;
    using Module = CUmodule;
    using Function = CUfunction;
    using DevicePointer = CUdeviceptr;
    using JitOption = CUjit_option;
    using IpcMemHandle = CUipcMemHandle;
    using IpcEventHandle = CUipcEventHandle;
    using Graph = CUgraph;
    using GraphNode = CUgraphNode;
    using GraphExec = CUgraphExec;
    using UserObject = CUuserObject;
    using HostNodeParams = CUDA_HOST_NODE_PARAMS;

    static constexpr unsigned kStreamNonBlocking = CU_STREAM_NON_BLOCKING;
    static constexpr unsigned kEventDisableTiming = CU_EVENT_DISABLE_TIMING;
    static constexpr unsigned kEventBlockingSync = CU_EVENT_BLOCKING_SYNC;
    static constexpr unsigned kEventInterprocess = CU_EVENT_INTERPROCESS;
    static constexpr unsigned kHostAllocPortable = CU_MEMHOSTALLOC_PORTABLE;
    static constexpr unsigned kHostRegisterPortable = CU_MEMHOSTREGISTER_PORTABLE;
    static constexpr unsigned kMemAttachGlobal = CU_MEM_ATTACH_GLOBAL;
    static constexpr unsigned kIpcMemLazyEnablePeerAccess = CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS;
    static constexpr CUdevice_attribute kAttributeComputeUnits =
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
    static constexpr CUdevice_attribute kAttributeMaxThreadsPerBlock =
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK;
    // What a kernel may have once it opts in (allowDynamicSharedMemory), not the 48 KiB default.
    static constexpr CUdevice_attribute kAttributeMaxSharedMemoryPerBlock =
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN;
    static constexpr CUdevice_attribute kAttributeMaxPitch = CU_DEVICE_ATTRIBUTE_MAX_PITCH;
    static constexpr CUdevice_attribute kAttributeManagedMemory =
        CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY;
    // CUDA 12 drivers say per device whether events can be shared (not on WSL, for one).
    static constexpr bool kHasIpcEventAttribute = true;
    static constexpr CUdevice_attribute kAttributeIpcEventSupported =
        CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED;
    static constexpr unsigned kUserObjectNoDestructorSync = CU_USER_OBJECT_NO_DESTRUCTOR_SYNC;
    static constexpr unsigned kGraphUserObjectMove = CU_GRAPH_USER_OBJECT_MOVE;
    // The oldest driver with every function native graphs call (cuGraphInstantiateWithFlags).
    static constexpr const char* kNativeGraphsSince = "CUDA 11.4";
    // cuGraphExecDestroy lets the launches already enqueued complete and frees the executable
    // after them; a host-to-host copy node runs in stream order as any other.
    static constexpr bool kExecDestroyWaitsForLaunches = true;
    static constexpr bool kHostToHostCopyNodes = true;
    // An event outlives the stream it was recorded on.
    static constexpr bool kEventQueriesReadTheirStream = false;
    static constexpr bool kIpcEventWaitsOnDevice = true;
    static constexpr JitOption kJitErrorLogBuffer = CU_JIT_ERROR_LOG_BUFFER;
    static constexpr JitOption kJitErrorLogBufferSize = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;

    // Filled by initialize(); read-only afterwards.
    static inline Symbols symbols{};

    // Stream capture by other code in the process (the application, PyTorch's CUDA graphs):
    // while any thread captures in CU_STREAM_CAPTURE_MODE_GLOBAL, the driver refuses the
    // "potentially unsafe" calls (cuStreamQuery, cuEventQuery, cuMemAlloc, synchronisations) of
    // every thread in the default interaction mode, and invalidates that capture. polyhal captures
    // nothing with the driver and uses only streams it created, so each entry runs with the
    // calling thread relaxed (cuThreadExchangeStreamCaptureMode), as PyTorch's caching allocator
    // does, and puts the thread's own mode back (engine/current_device.hpp).
    class RelaxedCapture {
      public:
        RelaxedCapture() noexcept { symbols.exchangeCaptureMode.address(&previous_); }
        ~RelaxedCapture() { symbols.exchangeCaptureMode.address(&previous_); }
        RelaxedCapture(const RelaxedCapture&) = delete;
        RelaxedCapture& operator=(const RelaxedCapture&) = delete;

      private:
        CUstreamCaptureMode previous_ = CU_STREAM_CAPTURE_MODE_RELAXED;
    };

    static void* toPointer(DevicePointer pointer) noexcept {
        return reinterpret_cast<void*>(static_cast<uintptr_t>(pointer));
    }
    static DevicePointer toDevicePointer(const void* pointer) noexcept {
        return static_cast<DevicePointer>(reinterpret_cast<uintptr_t>(pointer));
    }

    // Nothing is read from a module's image: the driver describes each kernel.
    struct ModuleInfo {};
    // What a launch checks, read once per function when it is looked up (describeKernel), so
    // that a launch calls no cuFuncGetParamInfo or cuFuncGetAttribute.
    struct KernelInfo {
        // The parameters' sizes in declaration order (cuFuncGetParamInfo, CUDA 12.4); unknown on
        // older drivers, whose launches go unchecked. The driver's failure to say, if it failed,
        // is reported by every launch.
        gpu::DeclaredParameters parameters;
        CUresult parameterQuery = CUDA_SUCCESS;
        // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, and the dynamic shared memory the function may
        // use (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), which launches only ever raise.
        size_t staticSharedBytes = 0;
        std::atomic<size_t> dynamicSharedLimit{0};
    };

    // The contract's functions (gpu_common/engine/api_contract.hpp): below, in error.cpp (the
    // results) and in api.cpp (modules, kernels and graph nodes).
    POLYHAL_GPU_API_FUNCTIONS(CudaApi);
};

// Every entry pushes its device's context onto the thread's context stack and pops it before
// returning, so the application's own current context is left as it was. A thread that already
// has the context current (the common case: one device, or a thread that stays on one) pays for
// one cuCtxGetCurrent.
inline halError CudaApi::enterContext(Context context, Context* /*previous*/,
                                      bool* switched) noexcept {
    CUcontext current = nullptr;
    if (halError error = gpu::call<CudaApi>(symbols.contextGetCurrent, &current)) return error;
    *switched = current != context;
    if (!*switched) return HAL_SUCCESS;
    if (halError error = gpu::call<CudaApi>(symbols.contextPushCurrent, context)) {
        *switched = false;
        return error;
    }
    return HAL_SUCCESS;
}

// Clears the device's state, a sticky fault included. "Resetting the primary context does not
// release it" (cuDevicePrimaryCtxReset's reference): the handle the device retained stays its
// context, started again on its next use.
inline halError CudaApi::resetContext(NativeDevice device) noexcept {
    return gpu::call<CudaApi>(symbols.primaryContextReset, device);
}

// Popping what was pushed cannot fail while the thread's stack is as entry left it.
inline void CudaApi::leaveContext(Context /*previous*/) noexcept {
    CUcontext popped = nullptr;
    symbols.contextPopCurrent.address(&popped);
}

inline halError CudaApi::retainContext(NativeDevice device, Context* context) noexcept {
    return gpu::call<CudaApi>(symbols.primaryContextRetain, context, device);
}

// deviceClose has no way to report a failed release, which only a dying driver returns.
inline void CudaApi::releaseContext(NativeDevice device, Context /*context*/) noexcept {
    symbols.primaryContextRelease.address(device);
}

// Unified addressing tells the driver where each pointer lives, so `kind` is not needed.
inline halError CudaApi::memcpyAsync(Stream stream, void* dst, const void* src, size_t count,
                                     halMemcpyKind /*kind*/) noexcept {
    return gpu::call<CudaApi>(symbols.memcpyAsync, toDevicePointer(dst), toDevicePointer(src),
                              count, stream);
}

// Nothing is read from a module's image: the driver describes each kernel.
inline halError CudaApi::describeModule(const unsigned char* /*image*/, size_t /*size*/,
                                        ModuleInfo* /*info*/) noexcept {
    return HAL_SUCCESS;
}

// A pitched copy as the driver's CUDA_MEMCPY2D or CUDA_MEMCPY3D describes it. Host ends are
// described as host memory, pageable or not (the driver stages pageable memory as cuMemcpyAsync
// does); device ends as device memory, so a wrong kind is the driver's error, not a copy from the
// wrong place. The driver reads the host or the device address of an end, as its memory type
// says.
template <class Copy>
Copy describeCopy(void* dst, size_t dstPitch, const void* src, size_t srcPitch, size_t width,
                  size_t height, halMemcpyKind kind) noexcept {
    const bool fromDevice =
        kind == HAL_MEMCPY_DEVICE_TO_HOST || kind == HAL_MEMCPY_DEVICE_TO_DEVICE;
    const bool toDevice = kind == HAL_MEMCPY_HOST_TO_DEVICE || kind == HAL_MEMCPY_DEVICE_TO_DEVICE;
    Copy copy{};
    copy.srcMemoryType = fromDevice ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    copy.srcHost = src;
    copy.srcDevice = CudaApi::toDevicePointer(src);
    copy.srcPitch = srcPitch;
    copy.dstMemoryType = toDevice ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    copy.dstHost = dst;
    copy.dstDevice = CudaApi::toDevicePointer(dst);
    copy.dstPitch = dstPitch;
    copy.WidthInBytes = width;
    copy.Height = height;
    return copy;
}

inline halError CudaApi::memcpy2DAsync(Stream stream, void* dst, size_t dstPitch, const void* src,
                                       size_t srcPitch, size_t width, size_t height,
                                       halMemcpyKind kind) noexcept {
    const auto copy =
        describeCopy<CUDA_MEMCPY2D>(dst, dstPitch, src, srcPitch, width, height, kind);
    return gpu::call<CudaApi>(symbols.memcpy2DAsync, &copy, stream);
}

inline halError CudaApi::launchHostFunc(Stream stream, halHostFn fn, void* userData) noexcept {
    return gpu::call<CudaApi>(symbols.launchHostFunc, stream, fn, userData);
}

}  // namespace polyhal::cuda

#endif  // POLYHAL_BACKENDS_CUDA_API_HPP_
