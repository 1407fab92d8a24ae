// libpolyhal_test_minimal.so: the test_minimal backend, presenting the smaller table of a plugin
// built against an older minor version of the plugin ABI.
#include <algorithm>
#include <polyhal/plugin_support.hpp>

#include "minimal_backend.hpp"

extern "C" HAL_PLUGIN_EXPORT halError halPluginGetDispatchTable(uint32_t coreAbiVersion,
                                                                const halPluginHost* host,
                                                                halPluginDispatchTable* table) {
    using namespace polyhal;
    const halError status =
        plugin::negotiate(coreAbiVersion, host, table, test_minimal::fullTable());
    if (status == HAL_SUCCESS) table->size = std::min(table->size, test_minimal::kTableSize);
    return status;
}
