// The CPU backend's dispatch table, built from the entries entries.hpp declares.
#include <polyhal/plugin_support.hpp>

#include "cpu_backend.h"
#include "entries.hpp"

namespace polyhal::cpu {
POLYHAL_PLUGIN_DISPATCH_TABLE("cpu")
}  // namespace polyhal::cpu

extern "C" halError polyhalCpuGetDispatchTable(uint32_t coreAbiVersion, const halPluginHost* host,
                                               halPluginDispatchTable* table) {
    static constexpr halPluginDispatchTable kTable = polyhal::cpu::dispatchTable();
    return polyhal::plugin::negotiate(coreAbiVersion, host, table, kTable);
}
