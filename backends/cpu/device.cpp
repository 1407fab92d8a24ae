// Device entries: opening, describing and synchronising the CPU devices.
#include "device.hpp"

#include <polyhal/plugin_support.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

#include "engine/kernel_arguments.hpp"
#include "entries.hpp"
#include "platform.hpp"

namespace polyhal::cpu {

namespace {
constexpr uint32_t kMaxThreadsPerBlock = 1024;
// As CUDA's portable per-block limit, so kernels written against it run on both.
constexpr uint64_t kMaxSharedMemoryPerBlock = 48 * 1024;
}  // namespace

Stream* Device::createStream(int priority) {
    Stream* stream = new Stream(*this, priority);
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        pruneFinished();
        timelines_.push_back(TrackedTimeline{stream->timeline(), false, {}});
    } catch (...) {
        stream->release().detach();
        throw;
    }
    return stream;
}

void Device::destroyStream(Stream& stream) {
    const std::shared_ptr<Timeline> timeline = stream.timeline();
    std::thread worker = stream.release();
    std::lock_guard<std::mutex> lock(mutex_);
    // First: the stream's own worker, if idle, is only now waking up to end; a later call joins
    // it, so that destroying returns at once.
    pruneFinished();
    for (TrackedTimeline& tracked : timelines_) {
        if (tracked.timeline == timeline) {
            tracked.destroyed = true;
            tracked.worker = std::move(worker);
        }
    }
    if (worker.joinable()) worker.detach();  // not tracked (cannot happen): let it end alone
}

void Device::pruneFinished() {
    // A pruned entry's worker is joined here, before remove_if moves another entry onto it:
    // assigning to a joinable std::thread would terminate the process.
    auto finished = [this](TrackedTimeline& tracked) {
        Timeline& timeline = *tracked.timeline;
        if (!tracked.destroyed || !timeline.reached(timeline.submitted())) return false;
        if (tracked.worker.joinable()) tracked.worker.join();
        std::optional<Failure> failure = timeline.takePendingFailure();
        if (failure && orphanedFailure_) {
            orphanedFailure_->laterFailures += 1 + failure->laterFailures;
        } else if (failure) {
            orphanedFailure_ = std::move(failure);
        }
        return true;
    };
    timelines_.erase(std::remove_if(timelines_.begin(), timelines_.end(), finished),
                     timelines_.end());
}

halError Device::synchronize() {
    std::vector<TimelinePoint> targets;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        pruneFinished();
        targets.reserve(timelines_.size());
        for (const TrackedTimeline& tracked : timelines_) {
            targets.push_back(TimelinePoint{tracked.timeline, tracked.timeline->submitted()});
        }
    }
    for (TimelinePoint& target : targets) {
        target.timeline->wait(target.ticket, WaitPolicy::kSpinThenSleep);
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        pruneFinished();  // the destroyed streams waited for above
        if (orphanedFailure_) {
            const Failure failure = *orphanedFailure_;
            orphanedFailure_.reset();
            return report(failure);
        }
    }
    for (TimelinePoint& target : targets) {
        if (const std::optional<Failure> failure = target.timeline->takePendingFailure()) {
            return report(*failure);
        }
    }
    return HAL_SUCCESS;
}

void Device::detachWorkers() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (TrackedTimeline& tracked : timelines_) {
        if (tracked.worker.joinable()) tracked.worker.detach();
    }
}

halError deviceOpen(int ordinal, halPluginDevice* device) {
    Device* opened = platform().device(ordinal);
    if (opened == nullptr) {
        return plugin::fail(HAL_ERROR_INVALID_DEVICE, "no CPU device %d (there are %d)", ordinal,
                            platform().deviceCount());
    }
    *device = plugin::toHandle(opened);
    return HAL_SUCCESS;
}

// Devices live as long as the process: the core may open them again.
void deviceClose(halPluginDevice /*device*/) {}

halError deviceGetInfo(halPluginDevice device, halPluginDeviceInfo* info) {
    Device& self = plugin::fromHandle<Device>(device);
    halPluginDeviceInfo filled = {};
    filled.size = info->size;
    std::snprintf(filled.name, sizeof filled.name, "%s", self.name().c_str());
    filled.totalMemory = self.memory().capacity();
    filled.computeUnits = std::max(1u, std::thread::hardware_concurrency());
    filled.maxThreadsPerBlock = kMaxThreadsPerBlock;
    filled.maxSharedMemoryPerBlock = kMaxSharedMemoryPerBlock;
    filled.maxKernelArgumentBytes = KernelArguments::kMaxTotalBytes;
    filled.capabilities = HAL_DEVICE_CAP_TIMING_EVENTS | HAL_DEVICE_CAP_HOST_FUNCTIONS |
                          HAL_DEVICE_CAP_KERNELS | HAL_DEVICE_CAP_STREAM_PRIORITIES |
                          HAL_DEVICE_CAP_HOST_ACCESSIBLE | HAL_DEVICE_CAP_NATIVE_HANDLES |
                          HAL_DEVICE_CAP_PEER_COPY | HAL_DEVICE_CAP_CONCURRENT_HOST_FUNCTIONS |
                          HAL_DEVICE_CAP_IPC_MEMORY | HAL_DEVICE_CAP_IPC_EVENTS |
                          HAL_DEVICE_CAP_HOST_REGISTER | HAL_DEVICE_CAP_MANAGED_MEMORY;
    filled.leastStreamPriority = kLeastStreamPriority;
    filled.greatestStreamPriority = kGreatestStreamPriority;
    // An older core's smaller struct gets the members it knows.
    std::memcpy(info, &filled, std::min(info->size, sizeof filled));
    return HAL_SUCCESS;
}

halError deviceSynchronize(halPluginDevice device) {
    return plugin::fromHandle<Device>(device).synchronize();
}

}  // namespace polyhal::cpu
