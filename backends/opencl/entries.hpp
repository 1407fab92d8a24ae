// The dispatch-table entries of the OpenCL backend, one group per source file, declared with
// their slots' signatures (<polyhal/plugin.h> says what each must do). plugin.cpp builds the
// table from them; entries left out (peer copies, 3-D copies, memory info, IPC) stay absent.
#ifndef POLYHAL_BACKENDS_OPENCL_ENTRIES_HPP_
#define POLYHAL_BACKENDS_OPENCL_ENTRIES_HPP_

#include <polyhal/plugin_support.hpp>

namespace polyhal::opencl {

// platform.cpp
POLYHAL_PLUGIN_ENTRY(initialize);
POLYHAL_PLUGIN_ENTRY(deviceGetCount);
POLYHAL_PLUGIN_ENTRY(backendGetInfo);

// device.cpp
POLYHAL_PLUGIN_ENTRY(deviceOpen);
POLYHAL_PLUGIN_ENTRY(deviceClose);
POLYHAL_PLUGIN_ENTRY(deviceGetInfo);
POLYHAL_PLUGIN_ENTRY(deviceSynchronize);

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
POLYHAL_PLUGIN_ENTRY(memsetAsync);

// module.cpp
POLYHAL_PLUGIN_ENTRY(moduleLoadData);
POLYHAL_PLUGIN_ENTRY(moduleUnload);
POLYHAL_PLUGIN_ENTRY(moduleGetFunction);
POLYHAL_PLUGIN_ENTRY(launchKernel);

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_ENTRIES_HPP_
