// The dispatch table of a plugin built on this layer, for the vendor API `Api`.
//
// What `Api` provides (see backends/cuda/api.hpp and backends/hip/api.hpp):
//   kName, kLibraries[], kLibraryDescription       backend name; library names to try; wording
//   Result, kSuccess, kNotReady, kPeerAccessAlreadyEnabled, kPeerAccessNotEnabled
//                                                  the vendor's status type and some of its values
//   toHalError(Result), describe(Result, &name, &text)
//   NativeDevice, Context, Stream, Event, Module, Function, DevicePointer, JitOption
//   symbols                                        the symbol table (symbol_table.hpp) whose roles
//                                                  the entries call
//   retainContext(), releaseContext()              what a device in use holds (CUDA: its primary
//                                                  context)
//   enterContext(), leaveContext()                 making it current on a thread for one entry and
//                                                  restoring what was current (current_device.hpp)
//   toPointer(), toDevicePointer()                 between void* and the vendor's device pointer
//   memcpyAsync(), memcpy2DAsync(), launchHostFunc()
//                                                  what the vendors do in different ways
//   checkArguments(), allowDynamicSharedMemory()   what a launch checks and sets up first
//   kStreamNonBlocking, kEventDisableTiming, kEventBlockingSync, kHostAllocPortable,
//   kAttributeComputeUnits, kAttributeMaxThreadsPerBlock, kAttributeMaxSharedMemoryPerBlock,
//   kAttributeMemoryPoolsSupported, kJitErrorLogBuffer, kJitErrorLogBufferSize
//                                                  the vendor's flag and enum values
#ifndef POLYHAL_BACKENDS_GPU_COMMON_DISPATCH_TABLE_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_DISPATCH_TABLE_HPP_

#include <polyhal/plugin.h>

#include "gpu_common/event.hpp"
#include "gpu_common/ipc.hpp"
#include "gpu_common/memory.hpp"
#include "gpu_common/module.hpp"
#include "gpu_common/peer.hpp"
#include "gpu_common/platform.hpp"
#include "gpu_common/stream.hpp"

namespace polyhal::gpu {

template <class Api>
constexpr halPluginDispatchTable dispatchTable() noexcept {
    halPluginDispatchTable table{};
    table.size = sizeof table;
    table.abiVersion = HAL_PLUGIN_ABI_VERSION;
    table.name = Api::kName;
    table.initialize = initialize<Api>;
    table.deviceGetCount = deviceGetCount<Api>;
    table.deviceOpen = deviceOpen<Api>;
    table.deviceClose = deviceClose<Api>;
    table.deviceGetInfo = deviceGetInfo<Api>;
    table.deviceSynchronize = deviceSynchronize<Api>;
    table.streamCreate = streamCreate<Api>;
    table.streamDestroy = streamDestroy<Api>;
    table.streamSynchronize = streamSynchronize<Api>;
    table.streamQuery = streamQuery<Api>;
    table.streamWaitEvent = streamWaitEvent<Api>;
    table.eventCreate = eventCreate<Api>;
    table.eventDestroy = eventDestroy<Api>;
    table.eventRecord = eventRecord<Api>;
    table.eventQuery = eventQuery<Api>;
    table.eventSynchronize = eventSynchronize<Api>;
    table.eventElapsedTime = eventElapsedTime<Api>;
    table.memAllocDevice = memAllocDevice<Api>;
    table.memFreeDevice = memFreeDevice<Api>;
    table.memAllocHost = memAllocHost<Api>;
    table.memFreeHost = memFreeHost<Api>;
    table.memcpyAsync = memcpyAsync<Api>;
    table.memsetAsync = memsetAsync<Api>;
    table.launchHostFunc = launchHostFunc<Api>;
    table.moduleLoadData = moduleLoadData<Api>;
    table.moduleUnload = moduleUnload<Api>;
    table.moduleGetFunction = moduleGetFunction<Api>;
    table.launchKernel = launchKernel<Api>;
    table.streamGetNativeHandle = streamGetNativeHandle<Api>;
    table.memcpyPeerAsync = memcpyPeerAsync<Api>;
    table.memGetInfo = memGetInfo<Api>;
    table.deviceCanAccessPeer = deviceCanAccessPeer<Api>;
    table.deviceEnablePeerAccess = deviceEnablePeerAccess<Api>;
    table.deviceDisablePeerAccess = deviceDisablePeerAccess<Api>;
    table.memcpy3DAsync = memcpy3DAsync<Api>;
    table.ipcMemGetHandle = ipcMemGetHandle<Api>;
    table.ipcMemOpenHandle = ipcMemOpenHandle<Api>;
    table.ipcMemCloseHandle = ipcMemCloseHandle<Api>;
    return table;
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_DISPATCH_TABLE_HPP_
