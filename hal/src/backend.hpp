// A loaded backend: its plugin library and the dispatch table it filled.
#ifndef POLYHAL_HAL_SRC_BACKEND_HPP_
#define POLYHAL_HAL_SRC_BACKEND_HPP_

#include <polyhal/plugin.h>

#include <string>

#include "plugin_guard.hpp"
#include "support/dynamic_library.hpp"

namespace polyhal {

struct Backend {
    std::string name;      // the table's name, e.g. "cpu"
    std::string location;  // plugin file, or "embedded" for the built-in CPU backend
    DynamicLibrary library;
    halPluginDispatchTable plugin{};  // the table as the plugin filled it
    // What the core calls once the backend is started: `plugin` behind the guard's trampolines
    // for a plugin file, `plugin` itself for a built-in backend.
    halPluginDispatchTable table{};
    PluginGuard guard;
    halPluginBackendInfo info{};  // what backendGetInfo said; zeros without it
    int deviceCount = 0;          // the devices to open: deviceGetCount's answer at the start
};

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_BACKEND_HPP_
