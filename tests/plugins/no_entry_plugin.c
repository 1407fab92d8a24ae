/* Test plugin: a valid shared library that does not export halPluginGetDispatchTable. */
#include <polyhal/plugin.h>

HAL_PLUGIN_EXPORT int polyhalTestNotTheEntryPoint(void) {
    return 0;
}
