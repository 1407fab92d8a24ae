// The CUDA driver functions this plugin calls, one line each: X(role, function). Roles are shared
// with backends/hip/symbols.hpp; see gpu_common/symbol_table.hpp.
//
// The plugin never links libcuda: initialize() opens libcuda.so.1. Versioned names are the ones
// cuda.h maps the plain names to (cuMemAlloc -> cuMemAlloc_v2 ...); cuEventElapsedTime_v2 is the
// newest of them, so the plugin needs a driver that exports it (CUDA 12.8 or newer).
#ifndef POLYHAL_BACKENDS_CUDA_SYMBOLS_HPP_
#define POLYHAL_BACKENDS_CUDA_SYMBOLS_HPP_

#include <cuda.h>

#include "gpu_common/symbol_table.hpp"

// clang-format off
#define POLYHAL_CUDA_SYMBOLS(X)                                  \
    X(init,                  cuInit)                             \
    X(getErrorName,          cuGetErrorName)                     \
    X(getErrorString,        cuGetErrorString)                   \
    X(deviceGetCount,        cuDeviceGetCount)                   \
    X(deviceGet,             cuDeviceGet)                        \
    X(deviceGetName,         cuDeviceGetName)                    \
    X(deviceTotalMem,        cuDeviceTotalMem_v2)                \
    X(deviceGetAttribute,    cuDeviceGetAttribute)               \
    X(primaryContextRetain,  cuDevicePrimaryCtxRetain)           \
    X(primaryContextRelease, cuDevicePrimaryCtxRelease_v2)       \
    X(contextGetCurrent,     cuCtxGetCurrent)                    \
    X(contextSetCurrent,     cuCtxSetCurrent)                    \
    X(streamPriorityRange,   cuCtxGetStreamPriorityRange)        \
    X(deviceSynchronize,     cuCtxSynchronize)                   \
    X(memGetInfo,            cuMemGetInfo_v2)                    \
    X(streamCreate,          cuStreamCreateWithPriority)         \
    X(streamDestroy,         cuStreamDestroy_v2)                 \
    X(streamSynchronize,     cuStreamSynchronize)                \
    X(streamQuery,           cuStreamQuery)                      \
    X(streamWaitEvent,       cuStreamWaitEvent)                  \
    X(launchHostFunc,        cuLaunchHostFunc)                   \
    X(eventCreate,           cuEventCreate)                      \
    X(eventDestroy,          cuEventDestroy_v2)                  \
    X(eventRecord,           cuEventRecord)                      \
    X(eventQuery,            cuEventQuery)                       \
    X(eventSynchronize,      cuEventSynchronize)                 \
    X(eventElapsedTime,      cuEventElapsedTime_v2)              \
    X(memAlloc,              cuMemAlloc_v2)                      \
    X(memFree,               cuMemFree_v2)                       \
    X(memAllocHost,          cuMemHostAlloc)                     \
    X(memFreeHost,           cuMemFreeHost)                      \
    X(memcpyAsync,           cuMemcpyAsync)                      \
    X(memsetD8Async,         cuMemsetD8Async)                    \
    X(moduleLoadDataEx,      cuModuleLoadDataEx)                 \
    X(moduleUnload,          cuModuleUnload)                     \
    X(moduleGetFunction,     cuModuleGetFunction)                \
    X(launchKernel,          cuLaunchKernel)
// clang-format on

namespace polyhal::cuda {

struct Symbols {
    POLYHAL_GPU_DEFINE_SYMBOLS(POLYHAL_CUDA_SYMBOLS)
};

}  // namespace polyhal::cuda

#endif  // POLYHAL_BACKENDS_CUDA_SYMBOLS_HPP_
