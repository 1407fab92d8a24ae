// A device as the core sees it: the backend that serves it and what the plugin reported.
#ifndef POLYHAL_HAL_SRC_DEVICE_HPP_
#define POLYHAL_HAL_SRC_DEVICE_HPP_

#include <polyhal/plugin.h>

#include <atomic>
#include <mutex>

#include "backend.hpp"
#include "objects.hpp"

namespace polyhal {

struct Device {
    Backend* backend;
    const halPluginDispatchTable* vtable;  // == &backend->table, the hot-path view
    halPluginDevice native;
    int ordinal;         // polyhal's number, over all backends
    int backendOrdinal;  // number within the backend
    halPluginDeviceInfo info;

    // The default stream, created on first use.
    std::atomic<halStream_t*> defaultStream{nullptr};
    std::mutex defaultStreamMutex;

    bool supports(halDeviceCapability capability) const {
        return (info.capabilities & capability) != 0;
    }
    int clampPriority(int priority) const {
        if (priority < info.greatestStreamPriority) return info.greatestStreamPriority;
        if (priority > info.leastStreamPriority) return info.leastStreamPriority;
        return priority;
    }
};

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_DEVICE_HPP_
