// The Level Zero backend: the dispatch table and the plugin's one exported symbol.
#include <polyhal/plugin.h>
#include <polyhal/plugin_support.hpp>

#include <exception>

#include "device.h"
#include "event.h"
#include "host_func.h"
#include "memory.h"
#include "module.h"
#include "stream.h"

namespace polyhal::level_zero {
namespace {

// Wraps an entry so that no C++ exception crosses the C ABI.
template <auto Entry>
struct Guarded;

template <typename... Args, halError (*Entry)(Args...)>
struct Guarded<Entry> {
    static halError call(Args... args) noexcept {
        return plugin::guarded("level_zero", [&] { return Entry(args...); });
    }
};

template <typename... Args, void (*Entry)(Args...)>
struct Guarded<Entry> {
    static void call(Args... args) noexcept {
        try {
            Entry(args...);
        } catch (const std::exception& e) {
            plugin::log(HAL_LOG_ERROR, "%s", e.what());
        } catch (...) {
            plugin::log(HAL_LOG_ERROR, "unknown exception");
        }
    }
};

template <auto Entry>
constexpr auto guarded = &Guarded<Entry>::call;

halPluginDispatchTable makeTable() {
    halPluginDispatchTable table{};
    table.size = sizeof table;
    table.abiVersion = HAL_PLUGIN_ABI_VERSION;
    table.name = "level_zero";
    table.initialize = guarded<initialize>;
    table.deviceGetCount = guarded<deviceGetCount>;
    table.deviceOpen = guarded<deviceOpen>;
    table.deviceClose = guarded<deviceClose>;
    table.deviceGetInfo = guarded<deviceGetInfo>;
    table.deviceSynchronize = guarded<deviceSynchronize>;
    table.streamCreate = guarded<streamCreate>;
    table.streamDestroy = guarded<streamDestroy>;
    table.streamSynchronize = guarded<streamSynchronize>;
    table.streamQuery = guarded<streamQuery>;
    table.streamWaitEvent = guarded<streamWaitEvent>;
    table.eventCreate = guarded<eventCreate>;
    table.eventDestroy = guarded<eventDestroy>;
    table.eventRecord = guarded<eventRecord>;
    table.eventQuery = guarded<eventQuery>;
    table.eventSynchronize = guarded<eventSynchronize>;
    table.eventElapsedTime = guarded<eventElapsedTime>;
    table.memAllocDevice = guarded<memAllocDevice>;
    table.memFreeDevice = guarded<memFreeDevice>;
    table.memAllocHost = guarded<memAllocHost>;
    table.memFreeHost = guarded<memFreeHost>;
    table.memcpyAsync = guarded<memcpyAsync>;
    table.memsetAsync = guarded<memsetAsync>;
    table.launchHostFunc = guarded<launchHostFunc>;
    table.moduleLoadData = guarded<moduleLoadData>;
    table.moduleUnload = guarded<moduleUnload>;
    table.moduleGetFunction = guarded<moduleGetFunction>;
    table.launchKernel = guarded<launchKernel>;
    table.streamGetNativeHandle = guarded<streamGetNativeHandle>;
    table.memcpyPeerAsync = guarded<memcpyPeerAsync>;
    table.memcpy3DAsync = guarded<memcpy3DAsync>;
    table.deviceCanAccessPeer = guarded<deviceCanAccessPeer>;
    table.deviceEnablePeerAccess = guarded<deviceEnablePeerAccess>;
    table.deviceDisablePeerAccess = guarded<deviceDisablePeerAccess>;
    return table;
}

}  // namespace
}  // namespace polyhal::level_zero

extern "C" HAL_PLUGIN_EXPORT halError halPluginGetDispatchTable(uint32_t coreAbiVersion,
                                                                const halPluginHost* host,
                                                                halPluginDispatchTable* table) {
    static const halPluginDispatchTable mine = polyhal::level_zero::makeTable();
    return polyhal::plugin::negotiate(coreAbiVersion, host, table, mine);
}
