// Device entries. With a real runtime, the device would hold the vendor's device and context
// handles.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "device.hpp"
#include "entries.hpp"

namespace polyhal_template {

halError deviceOpen(int /*ordinal*/, halPluginDevice* out) {
    auto* device = new Device;
    device->totalMemory = physicalMemory();
    *out = toHandle(device);
    return HAL_SUCCESS;
}

// Every stream is destroyed by now, but their workers may still be finishing queued work.
void deviceClose(halPluginDevice handle) {
    Device& device = fromHandle<Device>(handle);
    {
        std::unique_lock<std::mutex> lock(device.mutex);
        device.workerExited.wait(lock, [&] { return device.queues.empty(); });
    }
    delete &device;
}

// Fills a table of this plugin's version, then copies what fits in the core's (info->size), so
// a core built with an older, smaller halPluginDeviceInfo is never written past its end.
halError deviceGetInfo(halPluginDevice handle, halPluginDeviceInfo* info) {
    const Device& device = fromHandle<Device>(handle);
    halPluginDeviceInfo mine{};
    mine.size = info->size;
    std::snprintf(mine.name, sizeof mine.name, "polyhal template device (host memory)");
    mine.totalMemory = device.totalMemory;
    mine.computeUnits = std::max(1u, std::thread::hardware_concurrency());
    mine.maxThreadsPerBlock = 1;  // no kernels; a launch would have one thread per block
    mine.maxSharedMemoryPerBlock = 0;
    mine.capabilities = HAL_DEVICE_CAP_TIMING_EVENTS | HAL_DEVICE_CAP_HOST_FUNCTIONS |
                        HAL_DEVICE_CAP_HOST_ACCESSIBLE | HAL_DEVICE_CAP_NATIVE_HANDLES;
    // No priorities (no HAL_DEVICE_CAP_STREAM_PRIORITIES): the range is 0..0.
    mine.leastStreamPriority = 0;
    mine.greatestStreamPriority = 0;
    std::memcpy(info, &mine, std::min(info->size, sizeof mine));
    return HAL_SUCCESS;
}

// Waits for the work submitted so far to every stream of the device, destroyed streams whose
// workers are still draining included. The queues are copied first, so streams may be created
// and destroyed meanwhile.
halError deviceSynchronize(halPluginDevice handle) {
    Device& device = fromHandle<Device>(handle);
    std::vector<std::shared_ptr<CommandQueue>> queues;
    {
        std::lock_guard<std::mutex> lock(device.mutex);
        queues = device.queues;
    }
    for (const auto& queue : queues) queue->synchronize();
    return HAL_SUCCESS;
}

}  // namespace polyhal_template
