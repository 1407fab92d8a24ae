// The CPU backend's entry point under a name of its own. The core links the backend's objects
// into libpolyhal.so and calls this directly: that is the embedded default backend. The
// libpolyhal_cpu.so plugin exports the same table as halPluginGetDispatchTable (entry.cpp).
#ifndef POLYHAL_BACKENDS_CPU_CPU_BACKEND_H_
#define POLYHAL_BACKENDS_CPU_CPU_BACKEND_H_

#include <polyhal/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Same contract as halPluginEntryFn (see <polyhal/plugin.h>). */
halError polyhalCpuGetDispatchTable(uint32_t coreAbiVersion, const halPluginHost* host,
                                    halPluginDispatchTable* table);

#ifdef __cplusplus
}
#endif

#endif  // POLYHAL_BACKENDS_CPU_CPU_BACKEND_H_
