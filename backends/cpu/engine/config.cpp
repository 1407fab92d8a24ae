// The backend's configuration: environment variables and facts about the host (implementation).
#include "engine/config.hpp"

#include <polyhal/plugin_support.hpp>

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace polyhal::cpu {

namespace {

constexpr int kMaxDevices = 64;

// A decimal number with nothing around it; false if malformed or beyond 64 bits.
bool parseUnsigned(const char* text, uint64_t& value) {
    if (*text == '\0') return false;
    uint64_t result = 0;
    for (const char* digit = text; *digit != '\0'; ++digit) {
        if (*digit < '0' || *digit > '9') return false;
        const unsigned next = static_cast<unsigned>(*digit - '0');
        if (result > (UINT64_MAX - next) / 10) return false;
        result = result * 10 + next;
    }
    value = result;
    return true;
}

uint64_t physicalMemory() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGESIZE);
    return pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
}

// "model name" from /proc/cpuinfo (x86); the machine name where there is none (e.g. ARM).
std::string cpuModel() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.compare(0, 10, "model name") != 0) continue;
        const size_t colon = line.find(':');
        if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
    utsname machine{};
    return uname(&machine) == 0 ? machine.machine : "unknown CPU";
}

// The variable's value, or nullptr when it is unset or empty.
const char* environment(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

halError readConfig(Config& config) {
    if (const char* devices = environment("POLYHAL_CPU_DEVICES")) {
        uint64_t count = 0;
        if (!parseUnsigned(devices, count) || count < 1 || count > kMaxDevices) {
            return plugin::fail(HAL_ERROR_INVALID_VALUE,
                                "POLYHAL_CPU_DEVICES='%s' is not a device count from 1 to %d",
                                devices, kMaxDevices);
        }
        config.deviceCount = static_cast<int>(count);
    }
    if (const char* memory = environment("POLYHAL_CPU_MEMORY")) {
        if (!parseUnsigned(memory, config.memoryPerDevice) || config.memoryPerDevice == 0) {
            return plugin::fail(HAL_ERROR_INVALID_VALUE,
                                "POLYHAL_CPU_MEMORY='%s' is not a positive number of bytes",
                                memory);
        }
    } else {
        config.memoryPerDevice = physicalMemory();
    }
    config.cpuModel = cpuModel();
    return HAL_SUCCESS;
}

}  // namespace polyhal::cpu
