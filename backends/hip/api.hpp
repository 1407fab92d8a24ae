// The HIP runtime API as the shared GPU layer sees it (requirements in
// gpu_common/dispatch_table.hpp): its types and constants, and what HIP does its own way.
#ifndef POLYHAL_BACKENDS_HIP_API_HPP_
#define POLYHAL_BACKENDS_HIP_API_HPP_

#include <polyhal/plugin.h>

#include <cstdint>

#include "code_object.hpp"
#include "gpu_common/engine/api_contract.hpp"
#include "gpu_common/engine/graph_node.hpp"
#include "gpu_common/engine/kernel_parameters.hpp"
#include "gpu_common/engine/vendor_call.hpp"
#include "symbols.hpp"

namespace polyhal::hip {

// HIP's copy direction for `kind` (HAL_MEMCPY_DEFAULT never reaches a plugin).
constexpr hipMemcpyKind toHipMemcpyKind(halMemcpyKind kind) noexcept {
    switch (kind) {
    case HAL_MEMCPY_HOST_TO_HOST: return hipMemcpyHostToHost;
    case HAL_MEMCPY_HOST_TO_DEVICE: return hipMemcpyHostToDevice;
    case HAL_MEMCPY_DEVICE_TO_HOST: return hipMemcpyDeviceToHost;
    case HAL_MEMCPY_DEVICE_TO_DEVICE: return hipMemcpyDeviceToDevice;
    default: return hipMemcpyDefault;
    }
}

struct HipApi {
    static constexpr const char* kName = "hip";
    // ROCm 6, ROCm 5, then a development install's unversioned name.
    static constexpr const char* kLibraries[] = {"libamdhip64.so.6", "libamdhip64.so.5",
                                                 "libamdhip64.so"};
    static constexpr const char* kLibraryDescription = "the HIP runtime library";
    // What backendGetInfo reports: after CUDA, before Level Zero; kDLROCM; code objects.
    static constexpr uint32_t kSelectionPriority = 200;
    static constexpr int32_t kDLPackDeviceType = 10;
    static constexpr const char* kModuleImageKinds = "hsaco,co";

    using Result = hipError_t;
    static constexpr Result kSuccess = hipSuccess;
    static constexpr Result kNotReady = hipErrorNotReady;
    static constexpr Result kPeerAccessAlreadyEnabled = hipErrorPeerAccessAlreadyEnabled;
    static constexpr Result kPeerAccessNotEnabled = hipErrorPeerAccessNotEnabled;

    using NativeDevice = hipDevice_t;
    // A device is made current with hipSetDevice(ordinal); HIP's device handle is the ordinal.
    using Context = int;
    using Stream = hipStream_t;
    using Event = hipEvent_t;
    using Module = hipModule_t;
    using Function = hipFunction_t;
    using DevicePointer = void*;
    using JitOption = hipJitOption;
    using IpcMemHandle = hipIpcMemHandle_t;
    using IpcEventHandle = hipIpcEventHandle_t;
    using Graph = hipGraph_t;
    using GraphNode = hipGraphNode_t;
    using GraphExec = hipGraphExec_t;
    using UserObject = hipUserObject_t;
    using HostNodeParams = hipHostNodeParams;

    static constexpr unsigned kStreamNonBlocking = hipStreamNonBlocking;
    static constexpr unsigned kEventDisableTiming = hipEventDisableTiming;
    static constexpr unsigned kEventBlockingSync = hipEventBlockingSync;
    static constexpr unsigned kEventInterprocess = hipEventInterprocess;
    static constexpr unsigned kHostAllocPortable = hipHostMallocPortable;
    static constexpr unsigned kHostRegisterPortable = hipHostRegisterPortable;
    static constexpr unsigned kMemAttachGlobal = hipMemAttachGlobal;
    static constexpr unsigned kIpcMemLazyEnablePeerAccess = hipIpcMemLazyEnablePeerAccess;
    static constexpr hipDeviceAttribute_t kAttributeComputeUnits =
        hipDeviceAttributeMultiprocessorCount;
    static constexpr hipDeviceAttribute_t kAttributeMaxThreadsPerBlock =
        hipDeviceAttributeMaxThreadsPerBlock;
    static constexpr hipDeviceAttribute_t kAttributeMaxSharedMemoryPerBlock =
        hipDeviceAttributeMaxSharedMemoryPerBlock;
    static constexpr hipDeviceAttribute_t kAttributeMaxPitch = hipDeviceAttributeMaxPitch;
    static constexpr hipDeviceAttribute_t kAttributeManagedMemory = hipDeviceAttributeManagedMemory;
    // HIP has no attribute telling whether a device can share events.
    static constexpr bool kHasIpcEventAttribute = false;
    static constexpr unsigned kUserObjectNoDestructorSync = hipUserObjectNoDestructorSync;
    static constexpr unsigned kGraphUserObjectMove = hipGraphUserObjectMove;
    // The oldest runtime with every function native graphs call (the user objects).
    static constexpr const char* kNativeGraphsSince = "HIP 5.3";
    // ROCm's hipGraphExecDestroy frees an executable whose launch is still running, and runs the
    // graph's release, at once (gpu_common/engine/native_graph.hpp waits for the launch).
    static constexpr bool kExecDestroyWaitsForLaunches = false;
    // ROCm may run a host-to-host copy node on the launching thread, after finishing the stream
    // (releases differ on which ends make it do so): such a graph is replayed.
    static constexpr bool kHostToHostCopyNodes = false;
    // hipEventQuery and hipEventSynchronize read the stream of the event's last record, without
    // checking that it still exists: destroyed streams are kept (gpu_common/engine/
    // retired_streams.hpp).
    static constexpr bool kEventQueriesReadTheirStream = true;
    // hipStreamWaitEvent on an interprocess event waits on the host until the other process has
    // recorded it (clr's IPCEvent::streamWait): polyhal offers no interprocess events on HIP.
    static constexpr bool kIpcEventWaitsOnDevice = false;
    static constexpr JitOption kJitErrorLogBuffer = hipJitOptionErrorLogBuffer;
    static constexpr JitOption kJitErrorLogBufferSize = hipJitOptionErrorLogBufferSizeBytes;

    // Filled by initialize(); read-only afterwards.
    static inline Symbols symbols{};

    static void* toPointer(DevicePointer pointer) noexcept { return pointer; }
    static DevicePointer toDevicePointer(const void* pointer) noexcept {
        return const_cast<void*>(pointer);
    }

    // HIP has no counterpart of cuFuncGetParamInfo: a module's kernels and the parameters they
    // declare are read from its code object's metadata when it is loaded (code_object.hpp), as
    // the runtime reads them, and launches are checked against them. Without comgr, or for an
    // image whose metadata it cannot read, the arguments go unchecked.
    struct ModuleInfo {
        KernelParameters kernels;
    };
    struct KernelInfo {
        gpu::DeclaredParameters parameters;
    };
    // HIP's stream capture interaction (hipThreadExchangeStreamCaptureMode) is not modelled by
    // the HIP double yet: entries leave the thread's mode as it is.
    struct RelaxedCapture {};

    // The contract's functions (gpu_common/engine/api_contract.hpp): below, in error.cpp (the
    // results) and in api.cpp (modules, kernels and graph nodes).
    POLYHAL_GPU_API_FUNCTIONS(HipApi);
};

// Every entry makes its device current and sets the thread's previous device again before
// returning, so the application's own current device is left as it was. A thread that already
// has the device current (the common case: one device, or a thread that stays on one) pays for
// one hipGetDevice.
inline halError HipApi::enterContext(Context context, Context* previous, bool* switched) noexcept {
    if (halError error = gpu::call<HipApi>(symbols.getDevice, previous)) return error;
    *switched = *previous != context;
    if (!*switched) return HAL_SUCCESS;
    if (halError error = gpu::call<HipApi>(symbols.setDevice, context)) {
        *switched = false;
        return error;
    }
    return HAL_SUCCESS;
}

// Setting back a device that was current cannot fail.
inline void HipApi::leaveContext(Context previous) noexcept {
    (void)symbols.setDevice.address(previous);
}

// HIP keeps one context per device itself; nothing to retain or release.
inline halError HipApi::retainContext(NativeDevice device, Context* context) noexcept {
    *context = device;
    return HAL_SUCCESS;
}

inline void HipApi::releaseContext(NativeDevice /*device*/, Context /*context*/) noexcept {}

// Clears the current device's state (hipDeviceReset acts on the current device).
inline halError HipApi::resetContext(NativeDevice /*device: current*/) noexcept {
    return gpu::call<HipApi>(symbols.deviceReset);
}

inline halError HipApi::memcpyAsync(Stream stream, void* dst, const void* src, size_t count,
                                    halMemcpyKind kind) noexcept {
    return gpu::call<HipApi>(symbols.memcpyAsync, dst, src, count, toHipMemcpyKind(kind), stream);
}

inline halError HipApi::memcpy2DAsync(Stream stream, void* dst, size_t dstPitch, const void* src,
                                      size_t srcPitch, size_t width, size_t height,
                                      halMemcpyKind kind) noexcept {
    return gpu::call<HipApi>(symbols.memcpy2DAsync, dst, dstPitch, src, srcPitch, width, height,
                             toHipMemcpyKind(kind), stream);
}

inline halError HipApi::checkArguments(const KernelInfo& info, const halKernelArg* args,
                                       uint32_t numArgs) noexcept {
    return info.parameters.check(args, numArgs);
}

// A HIP kernel may use dynamic shared memory up to the device's maximum without opting in.
inline halError HipApi::allowDynamicSharedMemory(Function /*function*/, KernelInfo& /*info*/,
                                                 size_t /*bytes*/) noexcept {
    return HAL_SUCCESS;
}

// HIP documents no limit on a launch's argument sizes for polyhal to report: 0 leaves the core's
// default, CUDA's classic 4096 bytes.
inline uint64_t HipApi::maxKernelArgumentBytes(NativeDevice /*device*/) noexcept {
    return 0;
}

}  // namespace polyhal::hip

#endif  // POLYHAL_BACKENDS_HIP_API_HPP_
