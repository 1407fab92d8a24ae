// The Level Zero functions this plugin calls, resolved at run time from the loader.
//
// The plugin never links libze_loader: it opens libze_loader.so.1 in initialize(), so it builds
// and loads on machines without Level Zero and reports that cleanly. Every function the plugin
// calls is one line of POLYHAL_LEVEL_ZERO_SYMBOLS; calls read `ze.zeMemFree(...)`.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_SYMBOLS_H_
#define POLYHAL_BACKENDS_LEVEL_ZERO_SYMBOLS_H_

#include <level_zero/ze_api.h>
#include <polyhal/hal.h>

// clang-format off
#define POLYHAL_LEVEL_ZERO_SYMBOLS(X)            \
    X(zeInit)                                    \
    X(zeDriverGet)                               \
    X(zeDeviceGet)                               \
    X(zeDeviceGetProperties)                     \
    X(zeDeviceGetComputeProperties)              \
    X(zeDeviceGetMemoryProperties)               \
    X(zeDeviceGetCommandQueueGroupProperties)    \
    X(zeDeviceCanAccessPeer)                     \
    X(zeContextCreate)                           \
    X(zeContextDestroy)                          \
    X(zeCommandListCreateImmediate)              \
    X(zeCommandListDestroy)                      \
    X(zeCommandListAppendBarrier)                \
    X(zeCommandListAppendMemoryCopy)             \
    X(zeCommandListAppendMemoryCopyRegion)       \
    X(zeCommandListAppendMemoryFill)             \
    X(zeCommandListAppendLaunchKernel)           \
    X(zeCommandListAppendWriteGlobalTimestamp)   \
    X(zeEventPoolCreate)                         \
    X(zeEventPoolDestroy)                        \
    X(zeEventCreate)                             \
    X(zeEventDestroy)                            \
    X(zeEventHostSignal)                         \
    X(zeEventHostSynchronize)                    \
    X(zeEventHostReset)                          \
    X(zeEventQueryStatus)                        \
    X(zeMemAllocDevice)                          \
    X(zeMemAllocHost)                            \
    X(zeMemFree)                                 \
    X(zeModuleCreate)                            \
    X(zeModuleDestroy)                           \
    X(zeModuleBuildLogGetString)                 \
    X(zeModuleBuildLogDestroy)                   \
    X(zeKernelCreate)                            \
    X(zeKernelDestroy)                           \
    X(zeKernelGetProperties)                     \
    X(zeKernelSetGroupSize)                      \
    X(zeKernelSetArgumentValue)                  \
    X(zeKernelSetIndirectAccess)
// clang-format on

namespace polyhal::level_zero {

struct Symbols {
#define POLYHAL_LEVEL_ZERO_DECLARE(name) decltype(&::name) name = nullptr;
    POLYHAL_LEVEL_ZERO_SYMBOLS(POLYHAL_LEVEL_ZERO_DECLARE)
#undef POLYHAL_LEVEL_ZERO_DECLARE
};

// Filled by loadSymbols(); read-only afterwards, so any thread may call through it.
extern Symbols ze;

// Opens libze_loader.so.1 and resolves every symbol. A missing loader or symbol:
// HAL_ERROR_NO_DEVICE with dlerror()'s text. The loader stays open until the process exits.
halError loadSymbols();

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_SYMBOLS_H_
