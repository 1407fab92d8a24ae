// The OpenCL backend's dispatch-table entries, declared with their slots' signatures
// (<polyhal/plugin.h> says what each must do); plugin.cpp builds the table from them. Entries left
// out (peer copies, 3-D copies, memory info, IPC) stay absent.
#ifndef POLYHAL_BACKENDS_OPENCL_ENTRIES_HPP_
#define POLYHAL_BACKENDS_OPENCL_ENTRIES_HPP_

#include <polyhal/plugin_support.hpp>

namespace polyhal::opencl {

POLYHAL_PLUGIN_DECLARE_REQUIRED_ENTRIES();

// The optional entries it implements, by the file that defines them.
POLYHAL_PLUGIN_DECLARE_ENTRIES(backendGetInfo);                         // platform.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(streamGetNativeHandle, launchHostFunc);  // stream.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(eventElapsedTime, eventCompletionTime);  // event.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(memAllocHost, memFreeHost, memAllocManaged,
                               memFreeManaged);  // memory.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(moduleLoadData, moduleUnload, moduleGetFunction,
                               launchKernel);                            // module.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(graphCreate, graphLaunch, graphDestroy);  // graph.cpp

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_ENTRIES_HPP_
