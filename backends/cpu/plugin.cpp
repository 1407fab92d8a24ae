// The CPU backend's dispatch table.
#include <polyhal/plugin_support.hpp>

#include "cpu_backend.h"
#include "entries.h"

namespace polyhal::cpu {
namespace {

halPluginDispatchTable makeTable() {
    halPluginDispatchTable table = {};
    table.size = sizeof table;
    table.abiVersion = HAL_PLUGIN_ABI_VERSION;
    table.name = "cpu";

    table.initialize = initialize;
    table.deviceGetCount = deviceGetCount;
    table.deviceOpen = deviceOpen;
    table.deviceClose = deviceClose;
    table.deviceGetInfo = deviceGetInfo;
    table.deviceSynchronize = deviceSynchronize;

    table.streamCreate = streamCreate;
    table.streamDestroy = streamDestroy;
    table.streamSynchronize = streamSynchronize;
    table.streamQuery = streamQuery;
    table.streamWaitEvent = streamWaitEvent;

    table.eventCreate = eventCreate;
    table.eventDestroy = eventDestroy;
    table.eventRecord = eventRecord;
    table.eventQuery = eventQuery;
    table.eventSynchronize = eventSynchronize;
    table.eventElapsedTime = eventElapsedTime;

    table.memAllocDevice = memAllocDevice;
    table.memFreeDevice = memFreeDevice;
    table.memAllocHost = memAllocHost;
    table.memFreeHost = memFreeHost;
    table.memcpyAsync = memcpyAsync;
    table.memsetAsync = memsetAsync;
    table.memcpyPeerAsync = memcpyPeerAsync;
    table.memGetInfo = memGetInfo;
    table.memcpy3DAsync = memcpy3DAsync;

    table.launchHostFunc = launchHostFunc;

    table.moduleLoadData = moduleLoadData;
    table.moduleUnload = moduleUnload;
    table.moduleGetFunction = moduleGetFunction;
    table.launchKernel = launchKernel;

    table.streamGetNativeHandle = streamGetNativeHandle;

    table.ipcMemGetHandle = ipcMemGetHandle;
    table.ipcMemOpenHandle = ipcMemOpenHandle;
    table.ipcMemCloseHandle = ipcMemCloseHandle;
    table.ipcEventGetHandle = ipcEventGetHandle;
    table.ipcEventOpenHandle = ipcEventOpenHandle;
    return table;
}

}  // namespace
}  // namespace polyhal::cpu

extern "C" halError polyhalCpuGetDispatchTable(uint32_t coreAbiVersion, const halPluginHost* host,
                                               halPluginDispatchTable* table) {
    static const halPluginDispatchTable kTable = polyhal::cpu::makeTable();
    return polyhal::plugin::negotiate(coreAbiVersion, host, table, kTable);
}
