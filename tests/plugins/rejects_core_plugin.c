/* Test plugin: built for a plugin ABI 99.0 that no core speaks, its entry point refuses the
 * core's version, as plugin_support.hpp's negotiate() does for another major version. */
#include <polyhal/plugin.h>

#include <stdio.h>

HAL_PLUGIN_EXPORT halError halPluginGetDispatchTable(uint32_t coreAbiVersion,
                                                     const halPluginHost* host,
                                                     halPluginDispatchTable* table) {
    char message[128];
    (void)table;
    snprintf(message, sizeof message,
             "plugin 'test_rejects_core' speaks plugin ABI 99.0, the core speaks %u.%u",
             HAL_PLUGIN_VERSION_MAJOR(coreAbiVersion), HAL_PLUGIN_VERSION_MINOR(coreAbiVersion));
    host->setErrorMessage(message);
    return HAL_ERROR_BACKEND_INCOMPATIBLE;
}
