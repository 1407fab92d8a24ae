// The driver's exports: the loader fills its dispatch tables through zeGet*ProcAddrTable. Entries
// the double does not implement stay null; the loader and validation layer answer calls to them
// with ZE_RESULT_ERROR_UNSUPPORTED_FEATURE.
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include "entries.hpp"
#include "newer_ddi.hpp"

#define ZEDOUBLE_EXPORT extern "C" __attribute__((visibility("default"))) ze_result_t ZE_APICALL

namespace {

template <typename Table, typename Fill>
ze_result_t fillTable(ze_api_version_t version, Table* table, Fill fill) {
    if (table == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ZE_MAJOR_VERSION(version) != ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT)) {
        return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
    }
    *table = Table{};
    fill(*table);
    return ZE_RESULT_SUCCESS;
}

}  // namespace

using namespace zedouble;

ZEDOUBLE_EXPORT zeGetGlobalProcAddrTable(ze_api_version_t version, ze_global_dditable_t* table) {
    return fillTable(version, table, [](auto& t) { t.pfnInit = init; });
}

ZEDOUBLE_EXPORT zeGetDriverProcAddrTable(ze_api_version_t version, ze_driver_dditable_t* table) {
    return fillTable(version, table, [](auto& t) {
        t.pfnGet = driverGet;
        t.pfnGetApiVersion = driverGetApiVersion;
        t.pfnGetProperties = driverGetProperties;
        t.pfnGetIpcProperties = driverGetIpcProperties;
        t.pfnGetExtensionProperties = driverGetExtensionProperties;
        t.pfnGetExtensionFunctionAddress = driverGetExtensionFunctionAddress;
    });
}

ZEDOUBLE_EXPORT zeGetDeviceProcAddrTable(ze_api_version_t version, ze_device_dditable_t* table) {
    return fillTable(version, table, [](auto& t) {
        t.pfnGet = deviceGet;
        t.pfnGetSubDevices = deviceGetSubDevices;
        t.pfnGetProperties = deviceGetProperties;
        t.pfnGetComputeProperties = deviceGetComputeProperties;
        t.pfnGetMemoryProperties = deviceGetMemoryProperties;
        t.pfnGetCommandQueueGroupProperties = deviceGetCommandQueueGroupProperties;
        t.pfnCanAccessPeer = deviceCanAccessPeer;
        t.pfnGetMemoryAccessProperties = deviceGetMemoryAccessProperties;
        t.pfnGetStatus = deviceGetStatus;
    });
}

ZEDOUBLE_EXPORT zeGetContextProcAddrTable(ze_api_version_t version, ze_context_dditable_t* table) {
    return fillTable(version, table, [](auto& t) {
        t.pfnCreate = contextCreate;
        t.pfnDestroy = contextDestroy;
        t.pfnGetStatus = contextGetStatus;
    });
}

ZEDOUBLE_EXPORT zeGetCommandListProcAddrTable(ze_api_version_t version,
                                              ze_command_list_dditable_t* table) {
    return fillTable(version, table, [](auto& t) {
        t.pfnCreate = commandListCreate;
        t.pfnCreateImmediate = commandListCreateImmediate;
        t.pfnClose = commandListClose;
        t.pfnDestroy = commandListDestroy;
        t.pfnAppendBarrier = commandListAppendBarrier;
        t.pfnAppendMemoryCopy = commandListAppendMemoryCopy;
        t.pfnAppendMemoryCopyRegion = commandListAppendMemoryCopyRegion;
        t.pfnAppendMemoryFill = commandListAppendMemoryFill;
        t.pfnAppendWriteGlobalTimestamp = commandListAppendWriteGlobalTimestamp;
        t.pfnAppendLaunchKernel = commandListAppendLaunchKernel;
    });
}

ZEDOUBLE_EXPORT zeGetEventPoolProcAddrTable(ze_api_version_t version,
                                            ze_event_pool_dditable_t* table) {
    return fillTable(version, table, [](auto& t) {
        t.pfnCreate = eventPoolCreate;
        t.pfnDestroy = eventPoolDestroy;
    });
}

ZEDOUBLE_EXPORT zeGetEventProcAddrTable(ze_api_version_t version, ze_event_dditable_t* table) {
    return fillTable(version, table, [](auto& t) {
        t.pfnCreate = eventCreate;
        t.pfnDestroy = eventDestroy;
        t.pfnHostSignal = eventHostSignal;
        t.pfnHostSynchronize = eventHostSynchronize;
        t.pfnQueryStatus = eventQueryStatus;
        t.pfnHostReset = eventHostReset;
    });
}

ZEDOUBLE_EXPORT zeGetModuleProcAddrTable(ze_api_version_t version, ze_module_dditable_t* table) {
    return fillTable(version, table, [](auto& t) {
        t.pfnCreate = moduleCreate;
        t.pfnDestroy = moduleDestroy;
    });
}

ZEDOUBLE_EXPORT zeGetModuleBuildLogProcAddrTable(ze_api_version_t version,
                                                 ze_module_build_log_dditable_t* table) {
    return fillTable(version, table, [](auto& t) {
        t.pfnDestroy = moduleBuildLogDestroy;
        t.pfnGetString = moduleBuildLogGetString;
    });
}

ZEDOUBLE_EXPORT zeGetKernelProcAddrTable(ze_api_version_t version, ze_kernel_dditable_t* table) {
    return fillTable(version, table, [](auto& t) {
        t.pfnCreate = kernelCreate;
        t.pfnDestroy = kernelDestroy;
        t.pfnSetGroupSize = kernelSetGroupSize;
        t.pfnSetArgumentValue = kernelSetArgumentValue;
        t.pfnSetIndirectAccess = kernelSetIndirectAccess;
        t.pfnGetProperties = kernelGetProperties;
    });
}

// A caller of Level Zero 1.6 or later (a loader from 1.10 on) passes the longer table, with
// zeMemPutIpcHandle (compute-runtime: level_zero/api/core/ze_core_loader.cpp:59); Debian's loader
// passes the 1.4 one.
ZEDOUBLE_EXPORT zeGetMemProcAddrTable(ze_api_version_t version, ze_mem_dditable_t* table) {
    const ze_result_t result = fillTable(version, table, [](auto& t) {
        t.pfnAllocDevice = memAllocDevice;
        t.pfnAllocHost = memAllocHost;
        t.pfnAllocShared = memAllocShared;
        t.pfnFree = memFree;
        t.pfnGetAllocProperties = memGetAllocProperties;
        t.pfnGetIpcHandle = memGetIpcHandle;
        t.pfnOpenIpcHandle = memOpenIpcHandle;
        t.pfnCloseIpcHandle = memCloseIpcHandle;
    });
    if (result == ZE_RESULT_SUCCESS && version >= kApiVersion1_6) {
        reinterpret_cast<MemTable1_6*>(table)->pfnPutIpcHandle = memPutIpcHandle;
    }
    return result;
}

// Level Zero 1.9's table, which Debian's loader never asks for: a loader from 1.16 on calls
// zeCommandListImmediateAppendCommandListsExp through it (compute-runtime:
// level_zero/api/core/ze_core_loader.cpp:300-313).
ZEDOUBLE_EXPORT zeGetCommandListExpProcAddrTable(ze_api_version_t version,
                                                 CommandListExpTable1_9* table) {
    if (version < kApiVersion1_9) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
    return fillTable(version, table, [](auto& t) {
        t.pfnImmediateAppendCommandListsExp = commandListImmediateAppendCommandLists;
    });
}

// Tables of objects, tools and sysman interfaces the double does not offer, exported empty:
// the loader initialises a driver only when it has all of them.
#define ZEDOUBLE_EMPTY_TABLE(name, type)                          \
    ZEDOUBLE_EXPORT name(ze_api_version_t version, type* table) { \
        return fillTable(version, table, [](auto&) {});           \
    }
ZEDOUBLE_EMPTY_TABLE(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zeGetImageProcAddrTable, ze_image_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zeGetFenceProcAddrTable, ze_fence_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zetGetDeviceProcAddrTable, zet_device_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zetGetContextProcAddrTable, zet_context_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zetGetModuleProcAddrTable, zet_module_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zetGetMetricProcAddrTable, zet_metric_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zetGetDebugProcAddrTable, zet_debug_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetDriverProcAddrTable, zes_driver_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetDeviceProcAddrTable, zes_device_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetPowerProcAddrTable, zes_power_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetEngineProcAddrTable, zes_engine_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetPsuProcAddrTable, zes_psu_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetFanProcAddrTable, zes_fan_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetLedProcAddrTable, zes_led_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetRasProcAddrTable, zes_ras_dditable_t)
ZEDOUBLE_EMPTY_TABLE(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
#undef ZEDOUBLE_EMPTY_TABLE
