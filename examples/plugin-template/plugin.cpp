// The entry point, the only symbol the plugin exports: it hands polyhal the dispatch table built
// from the entries entries.hpp declares. Entries that throw (an allocation, a thread) need no
// try/catch of their own: the table turns an exception into a halError with a message.
#include <polyhal/plugin_support.hpp>

#include "entries.hpp"

namespace polyhal_template {
POLYHAL_PLUGIN_DISPATCH_TABLE("template")  // rename with the library: libpolyhal_<name>.so
}  // namespace polyhal_template

POLYHAL_PLUGIN_DEFINE_ENTRY_POINT(polyhal_template::dispatchTable())
