// Backend selection: turns POLYHAL_BACKEND and POLYHAL_PLUGIN_PATH into initialised backends.
#ifndef POLYHAL_HAL_SRC_LOADER_HPP_
#define POLYHAL_HAL_SRC_LOADER_HPP_

#include <polyhal/hal.h>

#include <memory>
#include <vector>

#include "backend.hpp"

namespace polyhal {

// Loads, negotiates and initialises the selected backends, in POLYHAL_BACKEND's order:
// - unset or empty: of the plugins in the plugin folders that ask to be chosen automatically, the
//   first by selection priority (halPluginBackendInfo) that loads and has a device, else cpu;
// - a comma-separated list of names or absolute paths: each must load and have a device, or
//   initialisation fails with a message naming everything that was tried. Never a fallback.
halError loadBackends(std::vector<std::unique_ptr<Backend>>* backends);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_LOADER_HPP_
