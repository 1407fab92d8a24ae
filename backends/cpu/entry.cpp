// The plugin's one exported symbol. Only libpolyhal_cpu.so contains this file; the embedded
// copy in libpolyhal.so is reached through polyhalCpuGetDispatchTable directly.
#include "cpu_backend.h"

extern "C" HAL_PLUGIN_EXPORT halError halPluginGetDispatchTable(uint32_t coreAbiVersion,
                                                                const halPluginHost* host,
                                                                halPluginDispatchTable* table) {
    return polyhalCpuGetDispatchTable(coreAbiVersion, host, table);
}
