// The entry point, the plugin's one exported symbol: it hands polyhal the dispatch table built
// from the entries entries.hpp declares. No entry catches exceptions itself: the table turns
// one into a halError with a message naming the entry.
#include <polyhal/plugin_support.hpp>

#include "entries.hpp"

namespace polyhal::opencl {
POLYHAL_PLUGIN_DISPATCH_TABLE("opencl")
}  // namespace polyhal::opencl

POLYHAL_PLUGIN_DEFINE_ENTRY_POINT(polyhal::opencl::dispatchTable())
