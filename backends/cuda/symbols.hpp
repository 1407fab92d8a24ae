// The CUDA driver functions this plugin calls, one line each: X(role, function). Roles are shared
// with backends/hip/symbols.hpp; see backends/plugin_common/symbol_table.hpp.
//
// The plugin never links libcuda: initialize() opens libcuda.so.1. Versioned names are the ones
// cuda.h maps the plain names to (cuMemAlloc -> cuMemAlloc_v2 ...).
//
// Oldest supported driver: CUDA 11.0 (R450), the first to export cuDevicePrimaryCtxRelease_v2,
// the newest of the required functions. Device memory is freed with cuMemFree on a thread of the
// plugin (gpu_common/engine/deferred_frees.hpp). Newer functions are used where the driver has
// them:
//   cuEventElapsedTime_v2 (12.8)  else cuEventElapsedTime, same prototype and meaning
//   cuFuncGetParamInfo (12.4)     else launch arguments are not checked against the kernel
//   cuGraphInstantiateWithFlags (11.4), user objects (11.3)
//                                 else graphs are replayed by the core (gpu_common/graph.hpp)
//   cuGraphAddKernelNode_v2 (12.0) else cuGraphAddKernelNode, whose CUDA_KERNEL_NODE_PARAMS_v1
//                                 is the start of the v2 parameters the plugin passes (no CUkernel
//                                 and no context: the function's own)
// tests/backends/cuda runs the plugin against doubles of a 13.0, a 12.2, an 11.8 and an 11.0
// driver.
#ifndef POLYHAL_BACKENDS_CUDA_SYMBOLS_HPP_
#define POLYHAL_BACKENDS_CUDA_SYMBOLS_HPP_

#include <cuda.h>

#include "plugin_common/symbol_table.hpp"

// clang-format off
#define POLYHAL_CUDA_SYMBOLS(X, X_OR, OPTIONAL, OPTIONAL_OR)                          \
    X(init,                  cuInit)                                                 \
    X(getErrorName,          cuGetErrorName)                                         \
    X(getErrorString,        cuGetErrorString)                                       \
    X(driverGetVersion,      cuDriverGetVersion)                                     \
    X(deviceGetCount,        cuDeviceGetCount)                                       \
    X(deviceGet,             cuDeviceGet)                                            \
    X(deviceGetName,         cuDeviceGetName)                                        \
    X(deviceTotalMem,        cuDeviceTotalMem_v2)                                    \
    X(deviceGetAttribute,    cuDeviceGetAttribute)                                   \
    X(primaryContextRetain,  cuDevicePrimaryCtxRetain)                               \
    X(primaryContextRelease, cuDevicePrimaryCtxRelease_v2)                           \
    X(primaryContextReset,   cuDevicePrimaryCtxReset_v2)                             \
    X(contextGetCurrent,     cuCtxGetCurrent)                                        \
    X(contextPushCurrent,    cuCtxPushCurrent_v2)                                    \
    X(contextPopCurrent,     cuCtxPopCurrent_v2)                                     \
    X(exchangeCaptureMode,   cuThreadExchangeStreamCaptureMode)                      \
    X(streamPriorityRange,   cuCtxGetStreamPriorityRange)                            \
    X(deviceSynchronize,     cuCtxSynchronize)                                       \
    X(memGetInfo,            cuMemGetInfo_v2)                                        \
    X(streamCreate,          cuStreamCreateWithPriority)                             \
    X(streamDestroy,         cuStreamDestroy_v2)                                     \
    X(streamSynchronize,     cuStreamSynchronize)                                    \
    X(streamQuery,           cuStreamQuery)                                          \
    X(streamWaitEvent,       cuStreamWaitEvent)                                      \
    X(launchHostFunc,        cuLaunchHostFunc)                                       \
    X(eventCreate,           cuEventCreate)                                          \
    X(eventDestroy,          cuEventDestroy_v2)                                      \
    X(eventRecord,           cuEventRecord)                                          \
    X(eventQuery,            cuEventQuery)                                           \
    X(eventSynchronize,      cuEventSynchronize)                                     \
    X_OR(eventElapsedTime,   cuEventElapsedTime_v2, "cuEventElapsedTime")            \
    X(memAlloc,              cuMemAlloc_v2)                                          \
    X(memFree,               cuMemFree_v2)                                           \
    X(memAllocHost,          cuMemHostAlloc)                                         \
    X(memFreeHost,           cuMemFreeHost)                                          \
    X(memHostRegister,       cuMemHostRegister_v2)                                   \
    X(memHostUnregister,     cuMemHostUnregister)                                    \
    X(memAllocManaged,       cuMemAllocManaged)                                      \
    X(memcpyAsync,           cuMemcpyAsync)                                          \
    X(memcpyPeerAsync,       cuMemcpyPeerAsync)                                      \
    X(memcpy2DAsync,         cuMemcpy2DAsync_v2)                                     \
    X(peerAccessCan,         cuDeviceCanAccessPeer)                                  \
    X(peerAccessEnable,      cuCtxEnablePeerAccess)                                  \
    X(peerAccessDisable,     cuCtxDisablePeerAccess)                                 \
    X(memsetD8Async,         cuMemsetD8Async)                                        \
    X(moduleLoadDataEx,      cuModuleLoadDataEx)                                     \
    X(moduleUnload,          cuModuleUnload)                                         \
    X(moduleGetFunction,     cuModuleGetFunction)                                    \
    X(functionGetAttribute,  cuFuncGetAttribute)                                     \
    X(functionSetAttribute,  cuFuncSetAttribute)                                     \
    OPTIONAL(functionGetParameterInfo, cuFuncGetParamInfo)                           \
    X(launchKernel,          cuLaunchKernel)                                         \
    OPTIONAL(ipcGetMemHandle,   cuIpcGetMemHandle)                                   \
    OPTIONAL(ipcOpenMemHandle,  cuIpcOpenMemHandle)                                  \
    OPTIONAL(ipcCloseMemHandle, cuIpcCloseMemHandle)                                 \
    OPTIONAL(ipcGetEventHandle,  cuIpcGetEventHandle)                                \
    OPTIONAL(ipcOpenEventHandle, cuIpcOpenEventHandle)                               \
    OPTIONAL(pointerGetAttribute,   cuPointerGetAttribute)                           \
    OPTIONAL(graphCreate,           cuGraphCreate)                                   \
    OPTIONAL(graphDestroy,          cuGraphDestroy)                                  \
    OPTIONAL(graphAddMemsetNode,    cuGraphAddMemsetNode)                            \
    OPTIONAL(graphAddMemcpyNode,    cuGraphAddMemcpyNode)                            \
    OPTIONAL_OR(graphAddKernelNode, cuGraphAddKernelNode_v2, "cuGraphAddKernelNode") \
    OPTIONAL(graphAddHostNode,      cuGraphAddHostNode)                              \
    OPTIONAL(graphInstantiate,      cuGraphInstantiateWithFlags)                     \
    OPTIONAL(graphLaunch,           cuGraphLaunch)                                   \
    OPTIONAL(graphExecDestroy,      cuGraphExecDestroy)                              \
    OPTIONAL(userObjectCreate,      cuUserObjectCreate)                              \
    OPTIONAL(userObjectRelease,     cuUserObjectRelease)                             \
    OPTIONAL(graphRetainUserObject, cuGraphRetainUserObject)
// clang-format on

namespace polyhal::cuda {

struct Symbols {
    POLYHAL_DEFINE_SYMBOLS(POLYHAL_CUDA_SYMBOLS)
};

}  // namespace polyhal::cuda

#endif  // POLYHAL_BACKENDS_CUDA_SYMBOLS_HPP_
