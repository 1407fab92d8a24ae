// The Level Zero entries the double implements; ddi.cpp hands them to the loader.
#ifndef POLYHAL_TESTS_BACKENDS_LEVEL_ZERO_ENTRIES_HPP_
#define POLYHAL_TESTS_BACKENDS_LEVEL_ZERO_ENTRIES_HPP_

#include <level_zero/ze_api.h>

namespace zedouble {

// device.cpp
ze_result_t ZE_APICALL init(ze_init_flags_t flags);
ze_result_t ZE_APICALL driverGet(uint32_t* count, ze_driver_handle_t* drivers);
ze_result_t ZE_APICALL driverGetApiVersion(ze_driver_handle_t, ze_api_version_t* version);
ze_result_t ZE_APICALL driverGetProperties(ze_driver_handle_t, ze_driver_properties_t*);
ze_result_t ZE_APICALL driverGetIpcProperties(ze_driver_handle_t, ze_driver_ipc_properties_t*);
ze_result_t ZE_APICALL driverGetExtensionProperties(ze_driver_handle_t, uint32_t* count,
                                                    ze_driver_extension_properties_t*);
ze_result_t ZE_APICALL driverGetExtensionFunctionAddress(ze_driver_handle_t, const char* name,
                                                         void** function);
ze_result_t ZE_APICALL deviceGet(ze_driver_handle_t, uint32_t* count, ze_device_handle_t*);
ze_result_t ZE_APICALL deviceGetSubDevices(ze_device_handle_t, uint32_t* count,
                                           ze_device_handle_t*);
ze_result_t ZE_APICALL deviceGetProperties(ze_device_handle_t, ze_device_properties_t*);
ze_result_t ZE_APICALL deviceGetComputeProperties(ze_device_handle_t,
                                                  ze_device_compute_properties_t*);
ze_result_t ZE_APICALL deviceGetMemoryProperties(ze_device_handle_t, uint32_t* count,
                                                 ze_device_memory_properties_t*);
ze_result_t ZE_APICALL deviceGetCommandQueueGroupProperties(ze_device_handle_t, uint32_t* count,
                                                            ze_command_queue_group_properties_t*);
ze_result_t ZE_APICALL deviceCanAccessPeer(ze_device_handle_t, ze_device_handle_t, ze_bool_t*);
ze_result_t ZE_APICALL deviceGetStatus(ze_device_handle_t);
ze_result_t ZE_APICALL deviceGetMemoryAccessProperties(ze_device_handle_t,
                                                       ze_device_memory_access_properties_t*);
ze_result_t ZE_APICALL contextCreate(ze_driver_handle_t, const ze_context_desc_t*,
                                     ze_context_handle_t*);
ze_result_t ZE_APICALL contextDestroy(ze_context_handle_t);
ze_result_t ZE_APICALL contextGetStatus(ze_context_handle_t);

// memory.cpp
ze_result_t ZE_APICALL memAllocDevice(ze_context_handle_t, const ze_device_mem_alloc_desc_t*,
                                      size_t size, size_t alignment, ze_device_handle_t, void**);
ze_result_t ZE_APICALL memAllocHost(ze_context_handle_t, const ze_host_mem_alloc_desc_t*,
                                    size_t size, size_t alignment, void**);
ze_result_t ZE_APICALL memAllocShared(ze_context_handle_t, const ze_device_mem_alloc_desc_t*,
                                      const ze_host_mem_alloc_desc_t*, size_t size,
                                      size_t alignment, ze_device_handle_t, void**);
ze_result_t ZE_APICALL memFree(ze_context_handle_t, void*);
ze_result_t ZE_APICALL memGetAllocProperties(ze_context_handle_t, const void*,
                                             ze_memory_allocation_properties_t*,
                                             ze_device_handle_t*);
ze_result_t ZE_APICALL memGetIpcHandle(ze_context_handle_t, const void*, ze_ipc_mem_handle_t*);
ze_result_t ZE_APICALL memOpenIpcHandle(ze_context_handle_t, ze_device_handle_t,
                                        ze_ipc_mem_handle_t, ze_ipc_memory_flags_t, void**);
ze_result_t ZE_APICALL memCloseIpcHandle(ze_context_handle_t, const void*);
// zeMemPutIpcHandle (Level Zero 1.6), reached through the loader's Mem table.
ze_result_t ZE_APICALL memPutIpcHandle(ze_context_handle_t, ze_ipc_mem_handle_t);

// events.cpp
ze_result_t ZE_APICALL eventPoolCreate(ze_context_handle_t, const ze_event_pool_desc_t*,
                                       uint32_t numDevices, ze_device_handle_t*,
                                       ze_event_pool_handle_t*);
ze_result_t ZE_APICALL eventPoolDestroy(ze_event_pool_handle_t);
ze_result_t ZE_APICALL eventCreate(ze_event_pool_handle_t, const ze_event_desc_t*,
                                   ze_event_handle_t*);
ze_result_t ZE_APICALL eventDestroy(ze_event_handle_t);
ze_result_t ZE_APICALL eventHostSignal(ze_event_handle_t);
ze_result_t ZE_APICALL eventHostSynchronize(ze_event_handle_t, uint64_t timeout);
ze_result_t ZE_APICALL eventQueryStatus(ze_event_handle_t);
ze_result_t ZE_APICALL eventHostReset(ze_event_handle_t);

// command_list.cpp
ze_result_t ZE_APICALL commandListCreateImmediate(ze_context_handle_t, ze_device_handle_t,
                                                  const ze_command_queue_desc_t*,
                                                  ze_command_list_handle_t*);
ze_result_t ZE_APICALL commandListCreate(ze_context_handle_t, ze_device_handle_t,
                                         const ze_command_list_desc_t*, ze_command_list_handle_t*);
ze_result_t ZE_APICALL commandListClose(ze_command_list_handle_t);
ze_result_t ZE_APICALL commandListDestroy(ze_command_list_handle_t);
// zeCommandListImmediateAppendCommandListsExp, reached through the loader's CommandListExp table.
ze_result_t ZE_APICALL commandListImmediateAppendCommandLists(
    ze_command_list_handle_t immediate, uint32_t numCommandLists, ze_command_list_handle_t* lists,
    ze_event_handle_t signal, uint32_t numWaitEvents, ze_event_handle_t* waitEvents);
ze_result_t ZE_APICALL commandListAppendBarrier(ze_command_list_handle_t, ze_event_handle_t,
                                                uint32_t, ze_event_handle_t*);
ze_result_t ZE_APICALL commandListAppendMemoryCopy(ze_command_list_handle_t, void*, const void*,
                                                   size_t, ze_event_handle_t, uint32_t,
                                                   ze_event_handle_t*);
ze_result_t ZE_APICALL commandListAppendMemoryCopyRegion(
    ze_command_list_handle_t, void*, const ze_copy_region_t*, uint32_t, uint32_t, const void*,
    const ze_copy_region_t*, uint32_t, uint32_t, ze_event_handle_t, uint32_t, ze_event_handle_t*);
ze_result_t ZE_APICALL commandListAppendMemoryFill(ze_command_list_handle_t, void*, const void*,
                                                   size_t, size_t, ze_event_handle_t, uint32_t,
                                                   ze_event_handle_t*);
ze_result_t ZE_APICALL commandListAppendWriteGlobalTimestamp(ze_command_list_handle_t, uint64_t*,
                                                             ze_event_handle_t, uint32_t,
                                                             ze_event_handle_t*);
ze_result_t ZE_APICALL commandListAppendLaunchKernel(ze_command_list_handle_t, ze_kernel_handle_t,
                                                     const ze_group_count_t*, ze_event_handle_t,
                                                     uint32_t, ze_event_handle_t*);

// module.cpp
ze_result_t ZE_APICALL moduleCreate(ze_context_handle_t, ze_device_handle_t,
                                    const ze_module_desc_t*, ze_module_handle_t*,
                                    ze_module_build_log_handle_t*);
ze_result_t ZE_APICALL moduleDestroy(ze_module_handle_t);
ze_result_t ZE_APICALL moduleBuildLogGetString(ze_module_build_log_handle_t, size_t*, char*);
ze_result_t ZE_APICALL moduleBuildLogDestroy(ze_module_build_log_handle_t);
ze_result_t ZE_APICALL kernelCreate(ze_module_handle_t, const ze_kernel_desc_t*,
                                    ze_kernel_handle_t*);
ze_result_t ZE_APICALL kernelDestroy(ze_kernel_handle_t);
ze_result_t ZE_APICALL kernelGetProperties(ze_kernel_handle_t, ze_kernel_properties_t*);
ze_result_t ZE_APICALL kernelSetGroupSize(ze_kernel_handle_t, uint32_t, uint32_t, uint32_t);
ze_result_t ZE_APICALL kernelSetArgumentValue(ze_kernel_handle_t, uint32_t, size_t, const void*);
ze_result_t ZE_APICALL kernelSetIndirectAccess(ze_kernel_handle_t,
                                               ze_kernel_indirect_access_flags_t);

}  // namespace zedouble

#endif  // POLYHAL_TESTS_BACKENDS_LEVEL_ZERO_ENTRIES_HPP_
