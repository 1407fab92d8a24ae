// The CUDA backend's entry point: the shared GPU layer's table over the CUDA driver API.
#include <polyhal/plugin_support.hpp>

#include "api.hpp"
#include "gpu_common/dispatch_table.hpp"

POLYHAL_PLUGIN_DEFINE_ENTRY_POINT(polyhal::gpu::dispatchTable<polyhal::cuda::CudaApi>())
