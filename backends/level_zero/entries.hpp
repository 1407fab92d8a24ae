// The Level Zero backend's dispatch-table entries, declared with their slots' signatures
// (<polyhal/plugin.h> says what each must do); plugin.cpp builds the table from them.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_ENTRIES_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_ENTRIES_HPP_

#include <polyhal/plugin_support.hpp>

namespace polyhal::level_zero {

POLYHAL_PLUGIN_DECLARE_REQUIRED_ENTRIES();

// The optional entries it implements, by the file that defines them.
POLYHAL_PLUGIN_DECLARE_ENTRIES(backendGetInfo);  // platform.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(deviceCanAccessPeer, deviceEnablePeerAccess, deviceDisablePeerAccess,
                               deviceReset);                            // device.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(streamGetNativeHandle, launchHostFunc);  // stream.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(eventElapsedTime, ipcEventGetHandle,
                               ipcEventOpenHandle);  // event.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(memAllocHost, memFreeHost, memcpy3DAsync, memcpyPeerAsync,
                               ipcMemGetHandle, ipcMemOpenHandle, ipcMemCloseHandle,
                               memAllocManaged, memFreeManaged);  // memory.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(moduleLoadData, moduleUnload, moduleGetFunction,
                               launchKernel);                            // module.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(graphCreate, graphLaunch, graphDestroy);  // graph.cpp

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_ENTRIES_HPP_
