// Events recorded on streams, and events shared with other processes: the event entries.
#include "event.hpp"

#include <polyhal/plugin_support.hpp>

#include <cstdint>

#include "device.hpp"
#include "engine/host_wait.hpp"
#include "engine/shared_event_steps.hpp"
#include "engine/translate.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "stream.hpp"
#include "symbols.hpp"

namespace polyhal::level_zero {

halError eventCreate(halPluginDevice device, uint32_t flags, halPluginEvent* event) {
    std::shared_ptr<SharedEventState> shared;
    if ((flags & HAL_EVENT_INTERPROCESS) != 0) {
        if (halError error = SharedEventState::create(&shared); error != HAL_SUCCESS) return error;
    }
    *event = plugin::toHandle(new Event(&plugin::fromHandle<Device>(device),
                                        (flags & HAL_EVENT_DISABLE_TIMING) == 0,
                                        (flags & HAL_EVENT_BLOCKING_SYNC) != 0, std::move(shared)));
    return HAL_SUCCESS;
}

halError eventDestroy(halPluginEvent event) {
    // The slot of a pending record stays reserved until it and the waits on it have run.
    return plugin::destroyHandle<Event>(event);
}

halError eventRecord(halPluginEvent eventHandle, halPluginStream streamHandle) {
    Event& event = plugin::fromHandle<Event>(eventHandle);
    if (event.shared()) return recordShared(streamHandle, event.shared());
    Stream& stream = plugin::fromHandle<Stream>(streamHandle);
    SlotRef slot;
    if (halError error = stream.device().events().acquire(&slot); error != HAL_SUCCESS) {
        return error;
    }
    const halError error =
        event.timing() ? stream.signalWithTimestamp(slot) : stream.signalAfterPriorWork(slot);
    if (error != HAL_SUCCESS) return error;
    event.setLastRecord(std::move(slot));
    return HAL_SUCCESS;
}

halError eventQuery(halPluginEvent event) {
    if (const auto& shared = plugin::fromHandle<Event>(event).shared()) {
        return shared->reached(shared->latest()) ? HAL_SUCCESS : HAL_ERROR_NOT_READY;
    }
    const SlotRef recorded = plugin::fromHandle<Event>(event).lastRecord();
    if (!recorded) return HAL_SUCCESS;
    const ze_result_t status = ze.zeEventQueryStatus.address(recorded->event);
    if (status == ZE_RESULT_NOT_READY) return HAL_ERROR_NOT_READY;
    return check(status, "zeEventQueryStatus");
}

halError eventSynchronize(halPluginEvent handle) {
    Event& event = plugin::fromHandle<Event>(handle);
    if (const auto& shared = event.shared()) {
        shared->wait(shared->latest());  // sleeps on a futex
        return HAL_SUCCESS;
    }
    const SlotRef recorded = event.lastRecord();
    if (!recorded) return HAL_SUCCESS;
    // Level Zero has no sleeping wait of its own (see engine/host_wait.hpp).
    if (event.blockingSync()) return check(waitSleeping(recorded->event), "zeEventQueryStatus");
    return check(ze.zeEventHostSynchronize.address(recorded->event, UINT64_MAX),
                 "zeEventHostSynchronize");
}

halError eventElapsedTime(float* ms, halPluginEvent start, halPluginEvent end) {
    const SlotRef first = plugin::fromHandle<Event>(start).lastRecord();
    const SlotRef last = plugin::fromHandle<Event>(end).lastRecord();
    // The timestamps are written when the records run: both must have completed.
    for (const SlotRef& slot : {first, last}) {
        const ze_result_t status = ze.zeEventQueryStatus.address(slot->event);
        if (status == ZE_RESULT_NOT_READY) {
            return plugin::fail(HAL_ERROR_NOT_READY,
                                "an event of halEventElapsedTime has not completed");
        }
        if (halError error = check(status, "zeEventQueryStatus"); error != HAL_SUCCESS) {
            return error;
        }
    }
    const ze_device_properties_t& properties = plugin::fromHandle<Event>(start).device().properties;
    *ms = elapsedMilliseconds(*first->timestamp, *last->timestamp, properties.timestampValidBits,
                              properties.timerResolution);
    return HAL_SUCCESS;
}

// The handle names the event's shared memory (engine/shared_event_steps.hpp says why Level
// Zero's own IPC event pools are not used).
halError ipcEventGetHandle(halPluginEvent event, halPluginIpcHandle* handle) {
    const auto& shared = plugin::fromHandle<Event>(event).shared();
    if (shared == nullptr) {
        return plugin::fail(HAL_ERROR_INVALID_VALUE,
                            "the event was created without HAL_EVENT_INTERPROCESS");
    }
    shared->exportTo(handle);
    return HAL_SUCCESS;
}

halError ipcEventOpenHandle(halPluginDevice device, const halPluginIpcHandle* handle,
                            halPluginEvent* event) {
    std::shared_ptr<SharedEventState> shared;
    if (halError error = SharedEventState::open(*handle, &shared); error != HAL_SUCCESS) {
        return error;
    }
    *event = plugin::toHandle(
        new Event(&plugin::fromHandle<Device>(device), false, false, std::move(shared)));
    return HAL_SUCCESS;
}

}  // namespace polyhal::level_zero
