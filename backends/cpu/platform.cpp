// Platform entries: the CPU devices, made once from the configuration (POLYHAL_CPU_*).
#include "platform.hpp"

#include <polyhal/plugin_support.hpp>

#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "entries.hpp"

namespace polyhal::cpu {

namespace {
// Created by the first initialize() and never destroyed: a plugin is never unloaded, and its
// streams' workers may run until the process exits, so no static destructor may tear the
// platform down under them.
Platform* thePlatform = nullptr;
std::mutex initializeMutex;
}  // namespace

Platform::Platform(const Config& config) : pool_(BlockPool::defaultHelperCount()) {
    devices_.reserve(config.deviceCount);
    for (int ordinal = 0; ordinal < config.deviceCount; ++ordinal) {
        std::string name =
            "polyhal CPU device " + std::to_string(ordinal) + " (" + config.cpuModel + ")";
        devices_.push_back(
            std::make_unique<Device>(std::move(name), config.memoryPerDevice, pool_));
    }
}

Device* Platform::device(int ordinal) const {
    return ordinal >= 0 && ordinal < deviceCount() ? devices_[ordinal].get() : nullptr;
}

Platform& platform() {
    return *thePlatform;
}

halError initialize() {
    std::lock_guard<std::mutex> lock(initializeMutex);
    if (thePlatform != nullptr) return HAL_SUCCESS;  // the core calls it once; be lenient
    Config config;
    if (const halError error = readConfig(config); error != HAL_SUCCESS) return error;
    thePlatform = new Platform(config);
    std::atexit([] {
        for (int ordinal = 0; ordinal < thePlatform->deviceCount(); ++ordinal) {
            thePlatform->device(ordinal)->detachWorkers();
        }
    });
    plugin::log(HAL_LOG_INFO, "%d device(s) of %llu bytes each on %s (%u hardware threads)",
                config.deviceCount, static_cast<unsigned long long>(config.memoryPerDevice),
                config.cpuModel.c_str(), std::thread::hardware_concurrency());
    return HAL_SUCCESS;
}

halError deviceGetCount(int* count) {
    *count = platform().deviceCount();
    return HAL_SUCCESS;
}

// Chosen by name or as libpolyhal.so's built-in fallback, never by priority: the plugin copy
// (libpolyhal_cpu.so) must not win automatic selection over the built-in one.
halError backendGetInfo(halPluginBackendInfo* info) {
    return plugin::describeBackend(info, 0, 1 /* kDLCPU: device memory is host memory */, "so");
}

}  // namespace polyhal::cpu
