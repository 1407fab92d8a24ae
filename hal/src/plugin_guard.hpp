// The one door into a plugin: the core calls a plugin's entries only through a table of
// trampolines, each of which passes the entry's result through pluginResult (error.hpp), so no
// value outside halError reaches the core or the caller, whichever entry returned it.
#ifndef POLYHAL_HAL_SRC_PLUGIN_GUARD_HPP_
#define POLYHAL_HAL_SRC_PLUGIN_GUARD_HPP_

#include <polyhal/plugin.h>

#include <cstddef>

namespace polyhal {

// How many plugin tables can be guarded at once: the trampolines are compiled per slot, since
// an entry's arguments do not say which backend it belongs to.
constexpr size_t kMaxGuardedTables = 8;

// A slot of the trampolines, held from install() until the guard goes (with its backend).
class PluginGuard {
  public:
    PluginGuard() = default;
    PluginGuard(const PluginGuard&) = delete;
    PluginGuard& operator=(const PluginGuard&) = delete;
    ~PluginGuard();

    // Takes a slot and fills `guarded` with `plugin`'s entries, each that returns a halError
    // behind a trampoline (absent entries stay absent, deviceClose is copied as it is); called
    // once. `plugin` must stay where it is while the guard holds the slot.
    // HAL_ERROR_BACKEND_INCOMPATIBLE when every slot is held.
    halError install(const halPluginDispatchTable* plugin, halPluginDispatchTable* guarded);

  private:
    int slot_ = -1;
};

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_PLUGIN_GUARD_HPP_
