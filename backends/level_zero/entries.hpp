// The dispatch-table entries of the Level Zero backend, one group per source file, declared with
// their slots' signatures (<polyhal/plugin.h> says what each must do).
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_ENTRIES_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_ENTRIES_HPP_

#include <polyhal/plugin_support.hpp>

namespace polyhal::level_zero {

// platform.cpp
POLYHAL_PLUGIN_ENTRY(initialize);
POLYHAL_PLUGIN_ENTRY(deviceGetCount);
POLYHAL_PLUGIN_ENTRY(backendGetInfo);

// device.cpp
POLYHAL_PLUGIN_ENTRY(deviceOpen);
POLYHAL_PLUGIN_ENTRY(deviceClose);
POLYHAL_PLUGIN_ENTRY(deviceGetInfo);
POLYHAL_PLUGIN_ENTRY(deviceSynchronize);
// Level Zero has no switch for peer access: a device reaches a peer's memory of the same context
// whenever zeDeviceCanAccessPeer says it can, so enabling checks that and disabling does nothing.
POLYHAL_PLUGIN_ENTRY(deviceCanAccessPeer);
POLYHAL_PLUGIN_ENTRY(deviceEnablePeerAccess);
POLYHAL_PLUGIN_ENTRY(deviceDisablePeerAccess);

// stream.cpp
POLYHAL_PLUGIN_ENTRY(streamCreate);
POLYHAL_PLUGIN_ENTRY(streamDestroy);
POLYHAL_PLUGIN_ENTRY(streamSynchronize);
POLYHAL_PLUGIN_ENTRY(streamQuery);
POLYHAL_PLUGIN_ENTRY(streamWaitEvent);
POLYHAL_PLUGIN_ENTRY(streamGetNativeHandle);
POLYHAL_PLUGIN_ENTRY(launchHostFunc);

// event.cpp
POLYHAL_PLUGIN_ENTRY(eventCreate);
POLYHAL_PLUGIN_ENTRY(eventDestroy);
POLYHAL_PLUGIN_ENTRY(eventRecord);
POLYHAL_PLUGIN_ENTRY(eventQuery);
POLYHAL_PLUGIN_ENTRY(eventSynchronize);
POLYHAL_PLUGIN_ENTRY(eventElapsedTime);

// memory.cpp
POLYHAL_PLUGIN_ENTRY(memAllocDevice);
POLYHAL_PLUGIN_ENTRY(memFreeDevice);
POLYHAL_PLUGIN_ENTRY(memAllocHost);
POLYHAL_PLUGIN_ENTRY(memFreeHost);
POLYHAL_PLUGIN_ENTRY(memcpyAsync);
POLYHAL_PLUGIN_ENTRY(memcpy3DAsync);
// Between devices of one context (HAL_DEVICE_CAP_PEER_COPY): one copy in the stream's order.
POLYHAL_PLUGIN_ENTRY(memcpyPeerAsync);
POLYHAL_PLUGIN_ENTRY(memsetAsync);

// module.cpp
POLYHAL_PLUGIN_ENTRY(moduleLoadData);
POLYHAL_PLUGIN_ENTRY(moduleUnload);
POLYHAL_PLUGIN_ENTRY(moduleGetFunction);
// Dynamic shared memory: OpenCL C and SPIR-V have no "extern __shared__" array; a kernel that
// takes dynamicSharedBytes > 0 declares one more parameter after its numArgs arguments, a
// `local` pointer, which is bound to dynamicSharedBytes of shared local memory.
POLYHAL_PLUGIN_ENTRY(launchKernel);

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_ENTRIES_HPP_
