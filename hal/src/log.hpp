// polyhal's logger: spdlog to stderr, level from POLYHAL_LOG_LEVEL (default warn).
#ifndef POLYHAL_HAL_SRC_LOG_HPP_
#define POLYHAL_HAL_SRC_LOG_HPP_

#include <polyhal/plugin.h>

#include <spdlog/logger.h>

namespace polyhal {

spdlog::logger& logger();

// Host services handed to plugins.
void pluginLog(halLogLevel level, const char* message);
int pluginShouldLog(halLogLevel level);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_LOG_HPP_
