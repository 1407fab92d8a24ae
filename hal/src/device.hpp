// A device as the core sees it: the backend that serves it and what the plugin reported.
#ifndef POLYHAL_HAL_SRC_DEVICE_HPP_
#define POLYHAL_HAL_SRC_DEVICE_HPP_

#include <polyhal/plugin.h>
#include <polyhal/allocator/device_pool.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "backend.hpp"
#include "deferred_failures.hpp"
#include "objects.hpp"
#include "pool_device.hpp"

namespace polyhal {

struct Device {
    Backend* backend;
    const halPluginDispatchTable* vtable;  // == &backend->table, the hot-path view
    halPluginDevice native;
    int ordinal;         // polyhal's number, over all backends
    int backendOrdinal;  // number within the backend
    halPluginDeviceInfo info;

    // The device's stream-aware memory pool (halMalloc, halMallocAsync).
    std::unique_ptr<PoolDevice> poolDevice;
    std::unique_ptr<allocator::DevicePool> pool;

    // Asynchronous failures the core's own waits received, until a reporting call takes them.
    DeferredFailures deferredFailures;

    // The default stream, created on first use.
    std::atomic<halStream_t*> defaultStream{nullptr};
    std::mutex defaultStreamMutex;

    // Devices whose memory kernels of this device were given access to
    // (halDeviceEnablePeerAccess), by ordinal.
    std::mutex peersMutex;
    std::vector<int> enabledPeers;

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
