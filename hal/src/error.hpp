// The calling thread's last error detail, and the helpers every API function uses to fail.
#ifndef POLYHAL_HAL_SRC_ERROR_HPP_
#define POLYHAL_HAL_SRC_ERROR_HPP_

#include <polyhal/hal.h>

#include <fmt/format.h>

#include <string>
#include <utility>

namespace polyhal {

// Replaces the calling thread's error detail.
void setLastErrorMessage(std::string message);
const char* lastErrorMessage();

// Records a formatted detail and returns `code`: `return fail(HAL_ERROR_INVALID_VALUE, ...)`.
template <typename... Args>
halError fail(halError code, fmt::format_string<Args...> format, Args&&... args) {
    setLastErrorMessage(fmt::format(format, std::forward<Args>(args)...));
    return code;
}

// Host service for plugins: a plugin's detail waits here until the core adopts it.
void setPluginErrorMessage(const char* message);

// A plugin's failure as "<backend>: <plugin detail>" (see adoptPluginError), without making it the
// thread's error detail.
std::string takePluginErrorMessage(halError code, const char* backend, const char* operation);

// Is `code` one of halError's values (HAL_ERROR_FORCE_UINT32 is not)?
bool isHalError(halError code);

// A plugin entry's result as the core may use it: a value outside halError (a plugin's bug, or
// a vendor code passed through) becomes HAL_ERROR_BACKEND, and the plugin's pending detail
// (adopted by adoptPluginError) then names `entry` and the raw value before the plugin's own.
// Every call into a plugin passes through here (plugin_guard.hpp).
halError pluginResult(halError code, const char* entry);

// Turns a plugin's failure into the thread's error detail, "<backend>: <plugin detail>", where
// `operation` names the public call for plugins that gave no detail. Returns `code`.
halError adoptPluginError(halError code, const char* backend, const char* operation);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_ERROR_HPP_
