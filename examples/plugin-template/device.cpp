// Device entries. With a real runtime, the device would hold the vendor's device and context
// handles.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "device.hpp"
#include "entries.hpp"
#include "stream.hpp"

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
    mine.maxThreadsPerBlock = kMaxThreadsPerBlock;
    mine.maxSharedMemoryPerBlock = kMaxSharedMemoryPerBlock;
    mine.capabilities = HAL_DEVICE_CAP_TIMING_EVENTS | HAL_DEVICE_CAP_HOST_FUNCTIONS |
                        HAL_DEVICE_CAP_HOST_ACCESSIBLE | HAL_DEVICE_CAP_NATIVE_HANDLES |
                        HAL_DEVICE_CAP_KERNELS;
    // No priorities (no HAL_DEVICE_CAP_STREAM_PRIORITIES): the range is 0..0.
    mine.leastStreamPriority = 0;
    mine.greatestStreamPriority = 0;
    std::memcpy(info, &mine, std::min(info->size, sizeof mine));
    return HAL_SUCCESS;
}

// Waits for the work submitted so far to every stream of the device, destroyed streams whose
// workers are still draining included, then reports the first failure of any of them and counts
// the others. The queues are copied first, so streams may be created and destroyed meanwhile.
halError deviceSynchronize(halPluginDevice handle) {
    Device& device = fromHandle<Device>(handle);
    std::vector<std::shared_ptr<CommandQueue>> queues;
    {
        std::lock_guard<std::mutex> lock(device.mutex);
        queues = device.queues;
    }
    for (const auto& queue : queues) queue->synchronize();
    std::vector<std::string> failures;
    for (const auto& queue : queues) {
        if (std::string failure = queue->takeFailure(); !failure.empty()) {
            failures.push_back(std::move(failure));
        }
    }
    {
        // Taken after the queues: a worker that exited meanwhile moved its failure here.
        std::lock_guard<std::mutex> lock(device.mutex);
        for (auto& failure : device.unreportedFailures) failures.push_back(std::move(failure));
        device.unreportedFailures.clear();
    }
    if (failures.size() > 1) {
        failures.front() +=
            " (and failures on " + std::to_string(failures.size() - 1) + " other stream(s))";
    }
    return reportFailure(failures.empty() ? std::string() : failures.front());
}

}  // namespace polyhal_template
