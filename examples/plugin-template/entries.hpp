// The template backend's dispatch-table entries, by the file that implements them, declared with
// their slots' signatures: each does what its comment in <polyhal/plugin.h> says, and plugin.cpp
// builds the table from the ones declared here. An optional entry left out (pinned host memory,
// kernels, peer copies, IPC) stays NULL: the core reports it as not supported and clears the
// capability bits it serves.
#ifndef POLYHAL_TEMPLATE_ENTRIES_HPP_
#define POLYHAL_TEMPLATE_ENTRIES_HPP_

#include <polyhal/plugin_support.hpp>

namespace polyhal_template {

using polyhal::plugin::fail;
using polyhal::plugin::fromHandle;
using polyhal::plugin::toHandle;

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
POLYHAL_PLUGIN_ENTRY(memcpyAsync);
POLYHAL_PLUGIN_ENTRY(memsetAsync);

}  // namespace polyhal_template

#endif  // POLYHAL_TEMPLATE_ENTRIES_HPP_
