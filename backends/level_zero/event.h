// Events: each record takes a fresh slot (see event_pool.h); the event points at the latest.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_EVENT_H_
#define POLYHAL_BACKENDS_LEVEL_ZERO_EVENT_H_

#include <polyhal/plugin.h>

#include <mutex>

#include "event_pool.h"

struct halPluginEvent_t {
public:
    halPluginEvent_t(halPluginDevice_t* device, bool timing, bool blockingSync)
        : device_(device), timing_(timing), blockingSync_(blockingSync) {}

    halPluginDevice_t* device() const { return device_; }
    bool timing() const { return timing_; }
    bool blockingSync() const { return blockingSync_; }  // synchronising sleeps

    // The slot of the latest record; null when never recorded.
    polyhal::level_zero::SlotRef lastRecord() {
        std::lock_guard<std::mutex> lock(mutex_);
        return lastRecord_;
    }
    void setLastRecord(polyhal::level_zero::SlotRef slot) {
        std::lock_guard<std::mutex> lock(mutex_);
        lastRecord_.swap(slot);  // the previous slot is released after unlocking
    }

private:
    halPluginDevice_t* const device_;
    const bool timing_;
    const bool blockingSync_;
    std::mutex mutex_;
    polyhal::level_zero::SlotRef lastRecord_;
};

namespace polyhal::level_zero {

halError eventCreate(halPluginDevice device, uint32_t flags, halPluginEvent* event);
halError eventDestroy(halPluginEvent event);
halError eventRecord(halPluginEvent event, halPluginStream stream);
halError eventQuery(halPluginEvent event);
halError eventSynchronize(halPluginEvent event);
halError eventElapsedTime(float* ms, halPluginEvent start, halPluginEvent end);

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_EVENT_H_
