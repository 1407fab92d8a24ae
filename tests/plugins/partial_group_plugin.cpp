// libpolyhal_test_partial_group.so: the working test_minimal backend with memAllocHost but not
// memFreeHost, half of a group of entries that work only together: the core must refuse it.
#include <polyhal/plugin_support.hpp>

#include "minimal_backend.hpp"

namespace {

// Never called: the core refuses the plugin before opening a device.
halError memAllocHost(halPluginDevice, size_t, void** ptr) {
    *ptr = nullptr;
    return HAL_ERROR_OUT_OF_MEMORY;
}

}  // namespace

extern "C" HAL_PLUGIN_EXPORT halError halPluginGetDispatchTable(uint32_t coreAbiVersion,
                                                                const halPluginHost* host,
                                                                halPluginDispatchTable* table) {
    halPluginDispatchTable mine = polyhal::test_minimal::fullTable();
    mine.memAllocHost = memAllocHost;
    return polyhal::plugin::negotiate(coreAbiVersion, host, table, mine);
}
