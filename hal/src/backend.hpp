// A loaded backend: its plugin library and the dispatch table it filled.
#ifndef POLYHAL_HAL_SRC_BACKEND_HPP_
#define POLYHAL_HAL_SRC_BACKEND_HPP_

#include <polyhal/plugin.h>

#include <string>

#include "support/dynamic_library.hpp"

namespace polyhal {

struct Backend {
    std::string name;      // the table's name, e.g. "cpu"
    std::string location;  // plugin file, or "embedded" for the built-in CPU backend
    DynamicLibrary library;
    halPluginDispatchTable table{};
    halPluginBackendInfo info{};  // what backendGetInfo said; zeros without it
};

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_BACKEND_HPP_
