// libpolyhal_test_abi99.so: the working test_minimal backend, but its entry point reports plugin
// ABI 99.0, a major version the core does not speak: the core must refuse it.
#include <polyhal/plugin_support.hpp>

#include "minimal_backend.hpp"

extern "C" HAL_PLUGIN_EXPORT halError halPluginGetDispatchTable(uint32_t coreAbiVersion,
                                                                const halPluginHost* host,
                                                                halPluginDispatchTable* table) {
    using namespace polyhal;
    const halError status =
        plugin::negotiate(coreAbiVersion, host, table, test_minimal::fullTable());
    if (status == HAL_SUCCESS) table->abiVersion = HAL_PLUGIN_MAKE_VERSION(99, 0);
    return status;
}
