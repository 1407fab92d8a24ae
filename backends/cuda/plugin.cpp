// The CUDA backend: the shared GPU layer over the CUDA driver API.
#include <polyhal/plugin_support.hpp>

#include "api.hpp"
#include "gpu_common/dispatch_table.hpp"

extern "C" HAL_PLUGIN_EXPORT halError halPluginGetDispatchTable(uint32_t coreAbiVersion,
                                                                const halPluginHost* host,
                                                                halPluginDispatchTable* table) {
    static constexpr halPluginDispatchTable kTable =
        polyhal::gpu::dispatchTable<polyhal::cuda::CudaApi>();
    return polyhal::plugin::negotiate(coreAbiVersion, host, table, kTable);
}
