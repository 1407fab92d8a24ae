// The Level Zero functions this plugin calls, one line each: X(function, function).
//
// The plugin never links libze_loader: it opens libze_loader.so.1 in initialize(), so it builds
// and loads on machines without Level Zero and reports that cleanly. Calls read
// `ze.zeMemFree.address(...)`; see backends/plugin_common/symbol_table.hpp.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_SYMBOLS_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_SYMBOLS_HPP_

#include <level_zero/loader/ze_loader.h>
#include <level_zero/ze_api.h>
#include <polyhal/hal.h>

#include "plugin_common/symbol_table.hpp"

#ifndef ZE_IMMEDIATE_COMMAND_LIST_APPEND_EXP_NAME
// Level Zero 1.9's extension, which the 1.4 headers lack: closed regular command lists submitted
// in an immediate command list's order. Loaders from 1.16 on (specification 1.9.1) export the
// function; Intel's driver hands it out through the loader only (platform.cpp).
#define ZE_IMMEDIATE_COMMAND_LIST_APPEND_EXP_NAME "ZE_experimental_immediate_command_list_append"
extern "C" ze_result_t ZE_APICALL zeCommandListImmediateAppendCommandListsExp(
    ze_command_list_handle_t hCommandListImmediate, uint32_t numCommandLists,
    ze_command_list_handle_t* phCommandLists, ze_event_handle_t hSignalEvent,
    uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents);
#endif

// Level Zero 1.6's release of an IPC memory handle, which the 1.4 headers lack (declared as newer
// headers declare it, so that the two agree). Loaders from 1.10 on export it.
extern "C" ze_result_t ZE_APICALL zeMemPutIpcHandle(ze_context_handle_t hContext,
                                                    ze_ipc_mem_handle_t handle);

// clang-format off
#define POLYHAL_LEVEL_ZERO_SYMBOLS(X, X_OR, OPTIONAL, OPTIONAL_OR)                        \
    X(zeInit,                                 zeInit)                                     \
    X(zeDriverGet,                            zeDriverGet)                                \
    X(zeDriverGetIpcProperties,               zeDriverGetIpcProperties)                   \
    X(zeDriverGetExtensionProperties,         zeDriverGetExtensionProperties)             \
    X(zeDriverGetExtensionFunctionAddress,    zeDriverGetExtensionFunctionAddress)        \
    X(zeDeviceGet,                            zeDeviceGet)                                \
    X(zeDeviceGetProperties,                  zeDeviceGetProperties)                      \
    X(zeDeviceGetComputeProperties,           zeDeviceGetComputeProperties)               \
    X(zeDeviceGetMemoryProperties,            zeDeviceGetMemoryProperties)                \
    X(zeDeviceGetMemoryAccessProperties,      zeDeviceGetMemoryAccessProperties)          \
    X(zeDeviceGetCommandQueueGroupProperties, zeDeviceGetCommandQueueGroupProperties)     \
    X(zeDeviceCanAccessPeer,                  zeDeviceCanAccessPeer)                      \
    X(zeDeviceGetStatus,                      zeDeviceGetStatus)                          \
    X(zeContextCreate,                        zeContextCreate)                            \
    X(zeContextDestroy,                       zeContextDestroy)                           \
    X(zeCommandListCreate,                    zeCommandListCreate)                        \
    X(zeCommandListCreateImmediate,           zeCommandListCreateImmediate)               \
    X(zeCommandListClose,                     zeCommandListClose)                         \
    X(zeCommandListDestroy,                   zeCommandListDestroy)                       \
    X(zeCommandListAppendBarrier,             zeCommandListAppendBarrier)                 \
    X(zeCommandListAppendMemoryCopy,          zeCommandListAppendMemoryCopy)              \
    X(zeCommandListAppendMemoryCopyRegion,    zeCommandListAppendMemoryCopyRegion)        \
    X(zeCommandListAppendMemoryFill,          zeCommandListAppendMemoryFill)              \
    X(zeCommandListAppendLaunchKernel,        zeCommandListAppendLaunchKernel)            \
    X(zeCommandListAppendWriteGlobalTimestamp, zeCommandListAppendWriteGlobalTimestamp)   \
    X(zeEventPoolCreate,                      zeEventPoolCreate)                          \
    X(zeEventPoolDestroy,                     zeEventPoolDestroy)                         \
    X(zeEventCreate,                          zeEventCreate)                              \
    X(zeEventDestroy,                         zeEventDestroy)                             \
    X(zeEventHostSignal,                      zeEventHostSignal)                          \
    X(zeEventHostSynchronize,                 zeEventHostSynchronize)                     \
    X(zeEventHostReset,                       zeEventHostReset)                           \
    X(zeEventQueryStatus,                     zeEventQueryStatus)                         \
    X(zeMemAllocDevice,                       zeMemAllocDevice)                           \
    X(zeMemAllocHost,                         zeMemAllocHost)                             \
    X(zeMemAllocShared,                       zeMemAllocShared)                           \
    X(zeMemFree,                              zeMemFree)                                  \
    X(zeMemGetAllocProperties,                zeMemGetAllocProperties)                    \
    X(zeMemGetIpcHandle,                      zeMemGetIpcHandle)                          \
    X(zeMemOpenIpcHandle,                     zeMemOpenIpcHandle)                         \
    X(zeMemCloseIpcHandle,                    zeMemCloseIpcHandle)                        \
    X(zeModuleCreate,                         zeModuleCreate)                             \
    X(zeModuleDestroy,                        zeModuleDestroy)                            \
    X(zeModuleBuildLogGetString,              zeModuleBuildLogGetString)                  \
    X(zeModuleBuildLogDestroy,                zeModuleBuildLogDestroy)                    \
    X(zeKernelCreate,                         zeKernelCreate)                             \
    X(zeKernelDestroy,                        zeKernelDestroy)                            \
    X(zeKernelGetProperties,                  zeKernelGetProperties)                      \
    X(zeKernelSetGroupSize,                   zeKernelSetGroupSize)                       \
    X(zeKernelSetArgumentValue,               zeKernelSetArgumentValue)                   \
    X(zeKernelSetIndirectAccess,              zeKernelSetIndirectAccess)                  \
    OPTIONAL(zeCommandListImmediateAppendCommandListsExp,                                 \
             zeCommandListImmediateAppendCommandListsExp)                                 \
    OPTIONAL(zeMemPutIpcHandle,               zeMemPutIpcHandle)                          \
    OPTIONAL(zelLoaderTranslateHandle,        zelLoaderTranslateHandle)
// clang-format on

namespace polyhal::level_zero {

struct Symbols {
    POLYHAL_DEFINE_SYMBOLS(POLYHAL_LEVEL_ZERO_SYMBOLS)
};

// Filled by loadSymbols(); read-only afterwards, so any thread may call through it.
extern Symbols ze;

// Opens libze_loader.so.1 and resolves every symbol. A missing loader or symbol:
// HAL_ERROR_NO_DEVICE with the reason. The loader stays open until the process exits.
halError loadSymbols();

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_SYMBOLS_HPP_
