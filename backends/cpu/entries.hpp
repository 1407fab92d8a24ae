// The CPU backend's dispatch-table entries, declared with their slots' signatures
// (<polyhal/plugin.h> says what each must do); plugin.cpp builds the table from them.
#ifndef POLYHAL_BACKENDS_CPU_ENTRIES_HPP_
#define POLYHAL_BACKENDS_CPU_ENTRIES_HPP_

#include <polyhal/plugin_support.hpp>

namespace polyhal::cpu {

POLYHAL_PLUGIN_DECLARE_REQUIRED_ENTRIES();

// The optional entries it implements, by the file that defines them.
POLYHAL_PLUGIN_DECLARE_ENTRIES(backendGetInfo);                         // platform.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(launchHostFunc, streamGetNativeHandle);  // stream.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(eventElapsedTime, ipcEventGetHandle,
                               ipcEventOpenHandle);                                   // event.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(memAllocHost, memFreeHost, memGetInfo, memcpy3DAsync,  // memory.cpp
                               memcpyPeerAsync, ipcMemGetHandle, ipcMemOpenHandle,
                               ipcMemCloseHandle, memHostRegister, memHostUnregister,
                               memAllocManaged, memFreeManaged);
POLYHAL_PLUGIN_DECLARE_ENTRIES(moduleLoadData, moduleUnload, moduleGetFunction,
                               launchKernel);                            // module.cpp
POLYHAL_PLUGIN_DECLARE_ENTRIES(graphCreate, graphLaunch, graphDestroy);  // graph.cpp

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENTRIES_HPP_
