// The entry point: the only symbol the plugin exports. It hands polyhal the template backend's
// dispatch table; polyhal::plugin::negotiate refuses another ABI major version and copies no
// more than the core's table holds.
#include <polyhal/plugin_support.hpp>

#include "entries.hpp"

namespace {

using namespace polyhal_template;

halPluginDispatchTable makeTable() {
    halPluginDispatchTable table{};
    table.size = sizeof table;
    table.abiVersion = HAL_PLUGIN_ABI_VERSION;
    table.name = "template";  // rename with the library: libpolyhal_<name>.so
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
    table.memcpyAsync = memcpyAsync;
    table.memsetAsync = memsetAsync;
    table.launchHostFunc = launchHostFunc;
    table.streamGetNativeHandle = streamGetNativeHandle;
    // Left NULL, so the core reports them as not supported and clears their capability bits:
    // memAllocHost/memFreeHost (pinned host memory; the core uses aligned host memory) and
    // moduleLoadData, moduleUnload, moduleGetFunction, launchKernel (HAL_DEVICE_CAP_KERNELS;
    // a backend with kernels fills all four, in module.cpp).
    return table;
}

}  // namespace

extern "C" HAL_PLUGIN_EXPORT halError halPluginGetDispatchTable(uint32_t coreAbiVersion,
                                                                const halPluginHost* host,
                                                                halPluginDispatchTable* table) {
    static const halPluginDispatchTable kTable = makeTable();
    return polyhal::plugin::negotiate(coreAbiVersion, host, table, kTable);
}
