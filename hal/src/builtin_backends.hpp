// The backends linked into libpolyhal.so, each reached through its own entry function. The list
// is generated at configure time from what the backends' CMake registered
// (polyhal_add_builtin_backend), so the core names no backend itself.
#ifndef POLYHAL_HAL_SRC_BUILTIN_BACKENDS_HPP_
#define POLYHAL_HAL_SRC_BUILTIN_BACKENDS_HPP_

#include <polyhal/plugin.h>

#include <cstddef>

namespace polyhal {

struct BuiltinBackend {
    const char* name;
    halPluginEntryFn entry;  // the plugin entry's contract, under a name of the backend's own
};

extern const BuiltinBackend kBuiltinBackends[];
extern const size_t kBuiltinBackendCount;

// The built-in backend called `name`, or nullptr.
const BuiltinBackend* findBuiltinBackend(const char* name);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_BUILTIN_BACKENDS_HPP_
