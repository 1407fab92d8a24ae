/* Test plugin: links with an unresolved symbol, so dlopen(RTLD_NOW) fails with "undefined
 * symbol: polyhal_test_undefined_function". */
#include <polyhal/plugin.h>

void polyhal_test_undefined_function(void);

HAL_PLUGIN_EXPORT halError halPluginGetDispatchTable(uint32_t coreAbiVersion,
                                                     const halPluginHost* host,
                                                     halPluginDispatchTable* table) {
    (void)coreAbiVersion;
    (void)host;
    (void)table;
    polyhal_test_undefined_function();
    return HAL_ERROR_UNKNOWN;
}
