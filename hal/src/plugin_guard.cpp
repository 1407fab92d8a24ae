// Implements plugin_guard.hpp.
#include "plugin_guard.hpp"

#include <polyhal/plugin_support.hpp>

#include <array>
#include <mutex>
#include <utility>

#include "error.hpp"

namespace polyhal {
namespace {

// The plugin table behind each slot, taken and given back under g_slotsMutex during
// initialisation. The trampolines read it without the lock: only once g_ready has published
// the runtime.
const halPluginDispatchTable* g_plugins[kMaxGuardedTables];
std::mutex g_slotsMutex;

// Entry `Id` of the plugin table in slot `Slot`, its result checked.
template <size_t Slot, auto Member, plugin::EntryId Id, typename... Args>
halError trampoline(Args... args) {
    return pluginResult((g_plugins[Slot]->*Member)(args...),
                        plugin::kEntryNames[static_cast<unsigned>(Id)]);
}

template <size_t Slot, auto Member, plugin::EntryId Id, typename... Args>
void guardEntry(halError (*pluginEntry)(Args...), halError (**guardedEntry)(Args...)) {
    if (pluginEntry != nullptr) *guardedEntry = &trampoline<Slot, Member, Id, Args...>;
}

// An entry that returns nothing (deviceClose) has no result to check.
template <size_t Slot, auto Member, plugin::EntryId Id, typename... Args>
void guardEntry(void (*)(Args...), void (**)(Args...)) {}

template <size_t Slot>
void fillTrampolines(const halPluginDispatchTable& plugin, halPluginDispatchTable* guarded) {
#define POLYHAL_GUARD_ENTRY(entry, requirement, capabilities, group)                       \
    guardEntry<Slot, &halPluginDispatchTable::entry, plugin::EntryId::entry>(plugin.entry, \
                                                                             &guarded->entry);
    HAL_PLUGIN_ENTRIES(POLYHAL_GUARD_ENTRY)
#undef POLYHAL_GUARD_ENTRY
}

using Filler = void (*)(const halPluginDispatchTable&, halPluginDispatchTable*);

template <size_t... Slots>
constexpr std::array<Filler, sizeof...(Slots)> fillers(std::index_sequence<Slots...>) {
    return {&fillTrampolines<Slots>...};
}

constexpr std::array<Filler, kMaxGuardedTables> kFillers =
    fillers(std::make_index_sequence<kMaxGuardedTables>());

}  // namespace

PluginGuard::~PluginGuard() {
    if (slot_ < 0) return;
    std::lock_guard<std::mutex> lock(g_slotsMutex);
    g_plugins[slot_] = nullptr;
}

halError PluginGuard::install(const halPluginDispatchTable* plugin,
                              halPluginDispatchTable* guarded) {
    std::lock_guard<std::mutex> lock(g_slotsMutex);
    for (size_t slot = 0; slot < kMaxGuardedTables; ++slot) {
        if (g_plugins[slot] != nullptr) continue;
        g_plugins[slot] = plugin;
        slot_ = static_cast<int>(slot);
        *guarded = *plugin;
        kFillers[slot](*plugin, guarded);
        return HAL_SUCCESS;
    }
    return fail(HAL_ERROR_BACKEND_INCOMPATIBLE, "{}: at most {} backends can be in use at once",
                plugin->name, kMaxGuardedTables);
}

}  // namespace polyhal
