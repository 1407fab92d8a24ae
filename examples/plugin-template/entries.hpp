// The template backend's dispatch-table entries, declared with their slots' signatures: each does
// what its comment in <polyhal/plugin.h> says, and plugin.cpp builds the table from the ones
// declared here. An optional entry left out (pinned host memory, peer copies, IPC) stays
// NULL: the core reports it as not supported and clears the capability bits it serves.
#ifndef POLYHAL_TEMPLATE_ENTRIES_HPP_
#define POLYHAL_TEMPLATE_ENTRIES_HPP_

#include <polyhal/plugin_support.hpp>

namespace polyhal_template {

using polyhal::plugin::fail;
using polyhal::plugin::fromHandle;
using polyhal::plugin::toHandle;

POLYHAL_PLUGIN_DECLARE_REQUIRED_ENTRIES();

// The optional entries it implements, by the file that defines them.
POLYHAL_PLUGIN_DECLARE_ENTRIES(backendGetInfo);                         // platform.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(streamGetNativeHandle, launchHostFunc);  // stream.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(eventElapsedTime);                       // event.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(moduleLoadData, moduleUnload, moduleGetFunction,
                               launchKernel);  // module.cpp

}  // namespace polyhal_template

#endif  // POLYHAL_TEMPLATE_ENTRIES_HPP_
