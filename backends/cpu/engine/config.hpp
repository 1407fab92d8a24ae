// The backend's configuration: environment variables and facts about the host.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_CONFIG_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_CONFIG_HPP_

#include <polyhal/hal.h>

#include <cstdint>
#include <string>

namespace polyhal::cpu {

struct Config {
    int deviceCount = 1;           // POLYHAL_CPU_DEVICES
    uint64_t memoryPerDevice = 0;  // POLYHAL_CPU_MEMORY, default: the host's physical memory
    std::string cpuModel;          // from /proc/cpuinfo
};

// Reads the configuration; an empty variable counts as unset. A malformed variable:
// HAL_ERROR_INVALID_VALUE with a message naming it and its value. Throws std::bad_alloc.
halError readConfig(Config& config);

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_CONFIG_HPP_
