// The HIP runtime functions this plugin calls, one line each: X(role, function). Roles are shared
// with backends/cuda/symbols.hpp; see backends/plugin_common/symbol_table.hpp.
//
// The plugin never links libamdhip64: initialize() opens libamdhip64.so.6 or .so.5 (or the
// unversioned name of a development install). Built against HIP 5.2's headers (Debian's
// libamdhip64-dev); every function below is in HIP 5.2. Device memory is freed with hipFree on a
// thread of the plugin (gpu_common/engine/deferred_frees.hpp). The graph functions and
// hipPointerGetAttributes are taken as optional, and the user objects came with HIP 5.3
// (user_objects.hpp): without any of them the core replays graphs (gpu_common/graph.hpp).
#ifndef POLYHAL_BACKENDS_HIP_SYMBOLS_HPP_
#define POLYHAL_BACKENDS_HIP_SYMBOLS_HPP_

// HIP's headers describe both HIP on AMD GPUs and HIP over CUDA; this is the AMD one. Its C++
// convenience overloads (hipMalloc(T**) ...) are left out so that decltype(&::hipMalloc) names
// the one exported function, as the header suggests for this use.
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#ifndef __HIP_DISABLE_CPP_FUNCTIONS__
#define __HIP_DISABLE_CPP_FUNCTIONS__
#endif
#include <hip/hip_runtime_api.h>

#include "user_objects.hpp"

#include "plugin_common/symbol_table.hpp"

// clang-format off
#define POLYHAL_HIP_SYMBOLS(X, X_OR, OPTIONAL, OPTIONAL_OR)      \
    X(init,                  hipInit)                            \
    X(getErrorName,          hipGetErrorName)                    \
    X(getErrorString,        hipGetErrorString)                  \
    X(deviceGetCount,        hipGetDeviceCount)                  \
    X(deviceGet,             hipDeviceGet)                       \
    X(deviceGetName,         hipDeviceGetName)                   \
    X(deviceTotalMem,        hipDeviceTotalMem)                  \
    X(deviceGetAttribute,    hipDeviceGetAttribute)              \
    X(getDevice,             hipGetDevice)                       \
    X(setDevice,             hipSetDevice)                       \
    X(deviceReset,           hipDeviceReset)                     \
    X(streamPriorityRange,   hipDeviceGetStreamPriorityRange)    \
    X(deviceSynchronize,     hipDeviceSynchronize)               \
    X(memGetInfo,            hipMemGetInfo)                      \
    X(streamCreate,          hipStreamCreateWithPriority)        \
    X(streamDestroy,         hipStreamDestroy)                   \
    X(streamSynchronize,     hipStreamSynchronize)               \
    X(streamQuery,           hipStreamQuery)                     \
    X(streamWaitEvent,       hipStreamWaitEvent)                 \
    X(streamAddCallback,     hipStreamAddCallback)               \
    X(eventCreate,           hipEventCreateWithFlags)            \
    X(eventDestroy,          hipEventDestroy)                    \
    X(eventRecord,           hipEventRecord)                     \
    X(eventQuery,            hipEventQuery)                      \
    X(eventSynchronize,      hipEventSynchronize)                \
    X(eventElapsedTime,      hipEventElapsedTime)                \
    X(memAlloc,              hipMalloc)                          \
    X(memFree,               hipFree)                            \
    X(memAllocHost,          hipHostMalloc)                      \
    X(memFreeHost,           hipHostFree)                        \
    X(memHostRegister,       hipHostRegister)                    \
    X(memHostUnregister,     hipHostUnregister)                  \
    X(memAllocManaged,       hipMallocManaged)                   \
    X(memcpyAsync,           hipMemcpyAsync)                     \
    X(memcpyPeerAsync,       hipMemcpyPeerAsync)                 \
    X(memcpy2DAsync,         hipMemcpy2DAsync)                   \
    X(peerAccessCan,         hipDeviceCanAccessPeer)             \
    X(peerAccessEnable,      hipDeviceEnablePeerAccess)          \
    X(peerAccessDisable,     hipDeviceDisablePeerAccess)         \
    X(memsetD8Async,         hipMemsetD8Async)                   \
    X(moduleLoadDataEx,      hipModuleLoadDataEx)                \
    X(moduleUnload,          hipModuleUnload)                    \
    X(moduleGetFunction,     hipModuleGetFunction)               \
    X(launchKernel,          hipModuleLaunchKernel)              \
    OPTIONAL(ipcGetMemHandle,   hipIpcGetMemHandle)              \
    OPTIONAL(ipcOpenMemHandle,  hipIpcOpenMemHandle)             \
    OPTIONAL(ipcCloseMemHandle, hipIpcCloseMemHandle)            \
    OPTIONAL(ipcGetEventHandle,  hipIpcGetEventHandle)           \
    OPTIONAL(ipcOpenEventHandle, hipIpcOpenEventHandle)           \
    OPTIONAL(pointerGetAttribute,   hipPointerGetAttributes)     \
    OPTIONAL(graphCreate,           hipGraphCreate)              \
    OPTIONAL(graphDestroy,          hipGraphDestroy)             \
    OPTIONAL(graphAddMemsetNode,    hipGraphAddMemsetNode)       \
    OPTIONAL(graphAddMemcpyNode,    hipGraphAddMemcpyNode1D)     \
    OPTIONAL(graphAddMemcpyNode3D,  hipGraphAddMemcpyNode)       \
    OPTIONAL(graphAddKernelNode,    hipGraphAddKernelNode)       \
    OPTIONAL(graphAddHostNode,      hipGraphAddHostNode)         \
    OPTIONAL(graphInstantiate,      hipGraphInstantiateWithFlags) \
    OPTIONAL(graphLaunch,           hipGraphLaunch)              \
    OPTIONAL(graphExecDestroy,      hipGraphExecDestroy)         \
    OPTIONAL(userObjectCreate,      hipUserObjectCreate)         \
    OPTIONAL(userObjectRelease,     hipUserObjectRelease)        \
    OPTIONAL(graphRetainUserObject, hipGraphRetainUserObject)
// clang-format on

namespace polyhal::hip {

struct Symbols {
    POLYHAL_DEFINE_SYMBOLS(POLYHAL_HIP_SYMBOLS)
};

}  // namespace polyhal::hip

#endif  // POLYHAL_BACKENDS_HIP_SYMBOLS_HPP_
