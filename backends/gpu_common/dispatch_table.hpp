// The dispatch table of a plugin built on this layer, for the vendor API `Api`: every entry the
// entry headers define, as `entry<Api>` (see POLYHAL_PLUGIN_DISPATCH_TABLE_TEMPLATE).
// What `Api` must provide is engine/api_contract.hpp, checked where Device<Api> is built.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_DISPATCH_TABLE_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_DISPATCH_TABLE_HPP_

#include <polyhal/plugin_support.hpp>

#include "gpu_common/device.hpp"
#include "gpu_common/event.hpp"
#include "gpu_common/graph.hpp"
#include "gpu_common/memory.hpp"
#include "gpu_common/module.hpp"
#include "gpu_common/platform.hpp"
#include "gpu_common/stream.hpp"

namespace polyhal::gpu {
POLYHAL_PLUGIN_DISPATCH_TABLE_TEMPLATE()
}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_DISPATCH_TABLE_HPP_
