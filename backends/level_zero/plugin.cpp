// The Level Zero backend's dispatch table, built from the entries entries.hpp declares, and the
// plugin's one exported symbol.
#include <polyhal/plugin_support.hpp>

#include "entries.hpp"

namespace polyhal::level_zero {
POLYHAL_PLUGIN_DISPATCH_TABLE("level_zero")
}  // namespace polyhal::level_zero

POLYHAL_PLUGIN_DEFINE_ENTRY_POINT(polyhal::level_zero::dispatchTable())
