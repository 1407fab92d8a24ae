// Events: each record takes a fresh slot (see engine/event_pool.hpp); the event points at the
// latest. An event shared with other processes keeps its records in shared memory instead
// (backends/plugin_common/shared_event.hpp).
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_EVENT_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_EVENT_HPP_

#include <polyhal/plugin.h>

#include <memory>
#include <mutex>

#include "engine/event_pool.hpp"
#include "plugin_common/shared_event.hpp"

namespace polyhal::level_zero {

class Device;

class Event {
  public:
    using Handle = halPluginEvent;

    Event(Device* device, bool timing, bool blockingSync,
          std::shared_ptr<SharedEventState> shared = nullptr)
        : device_(device),
          timing_(timing),
          blockingSync_(blockingSync),
          shared_(std::move(shared)) {}

    Device& device() const { return *device_; }
    bool timing() const { return timing_; }
    bool blockingSync() const { return blockingSync_; }  // synchronising sleeps
    // The records of a HAL_EVENT_INTERPROCESS event, in every process holding it; null for
    // others.
    const std::shared_ptr<SharedEventState>& shared() const { return shared_; }

    // The slot of the latest record; null when never recorded.
    SlotRef lastRecord() {
        std::lock_guard<std::mutex> lock(mutex_);
        return lastRecord_;
    }
    void setLastRecord(SlotRef slot) {
        std::lock_guard<std::mutex> lock(mutex_);
        lastRecord_.swap(slot);  // the previous slot is released after unlocking
    }

  private:
    Device* const device_;
    const bool timing_;
    const bool blockingSync_;
    const std::shared_ptr<SharedEventState> shared_;
    std::mutex mutex_;
    SlotRef lastRecord_;
};

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_EVENT_HPP_
