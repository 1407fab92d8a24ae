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
#include "legacy_stream.hpp"
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

    // Its blocking streams, for the legacy default stream (halSetDefaultStreamMode).
    LegacyStreams legacy;

    // Devices whose memory kernels of this device were given access to
    // (halDeviceEnablePeerAccess), by ordinal.
    std::mutex peersMutex;
    std::vector<int> enabledPeers;

    bool supports(halDeviceCapability capability) const {
        return (info.capabilities & capability) != 0;
    }

    // The stream priority range: deviceGetInfo's, or, where the plugin reads it only from a
    // device in use (deviceGetStreamPriorityRange), read the first time it is needed, so that
    // halInit opens no device for it. An inverted range or a failure is no priorities (0, 0).
    void streamPriorityRange(int* least, int* greatest) {
        std::call_once(streamPrioritiesRead, [this] {
            streamPriorities[0] = info.leastStreamPriority;
            streamPriorities[1] = info.greatestStreamPriority;
            if (vtable->deviceGetStreamPriorityRange != nullptr &&
                vtable->deviceGetStreamPriorityRange(native, &streamPriorities[0],
                                                     &streamPriorities[1]) != HAL_SUCCESS) {
                streamPriorities[0] = streamPriorities[1] = 0;
            }
            if (streamPriorities[1] > streamPriorities[0]) {
                streamPriorities[0] = streamPriorities[1] = 0;
            }
        });
        *least = streamPriorities[0];
        *greatest = streamPriorities[1];
    }
    int clampPriority(int priority) {
        int least = 0;
        int greatest = 0;
        streamPriorityRange(&least, &greatest);
        if (priority < greatest) return greatest;
        if (priority > least) return least;
        return priority;
    }

  private:
    std::once_flag streamPrioritiesRead;
    int streamPriorities[2] = {0, 0};  // least, greatest
};

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_DEVICE_HPP_
