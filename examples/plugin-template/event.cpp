// Events: a record enqueues a marker command on the stream; the event keeps the marker, which
// says when it was reached. With a real runtime, eventRecord would be cuEventRecord or
// clEnqueueMarkerWithWaitList, and the queries the vendor's event query and wait.
#include <chrono>
#include <memory>

#include "entries.hpp"
#include "event.hpp"

namespace polyhal_template {

// Every event can be timed, so HAL_EVENT_DISABLE_TIMING needs nothing; HAL_EVENT_BLOCKING_SYNC
// is what eventSynchronize does anyway (it sleeps on a condition variable).
halError eventCreate(halPluginDevice /*device*/, uint32_t /*flags*/, halPluginEvent* out) {
    *out = toHandle(new Event);
    return HAL_SUCCESS;
}

// Waits already enqueued hold their own reference to the marker, so they are unaffected.
halError eventDestroy(halPluginEvent event) {
    delete &fromHandle<Event>(event);
    return HAL_SUCCESS;
}

halError eventRecord(halPluginEvent event, halPluginStream stream) {
    fromHandle<Event>(event).record(fromHandle<Stream>(stream).queue->submitMarker());
    return HAL_SUCCESS;
}

halError eventQuery(halPluginEvent event) {
    const std::shared_ptr<Marker> marker = fromHandle<Event>(event).lastRecord();
    if (marker == nullptr || marker->timeline->reached(marker->ticket)) return HAL_SUCCESS;
    return HAL_ERROR_NOT_READY;
}

halError eventSynchronize(halPluginEvent event) {
    const std::shared_ptr<Marker> marker = fromHandle<Event>(event).lastRecord();
    if (marker != nullptr) marker->timeline->waitFor(marker->ticket);
    return HAL_SUCCESS;
}

// HAL_DEVICE_CAP_TIMING_EVENTS. The core has checked that both events were recorded with timing;
// either may still be pending.
halError eventElapsedTime(float* ms, halPluginEvent startEvent, halPluginEvent endEvent) {
    const std::shared_ptr<Marker> start = fromHandle<Event>(startEvent).lastRecord();
    const std::shared_ptr<Marker> end = fromHandle<Event>(endEvent).lastRecord();
    for (const auto& marker : {start, end}) {
        if (!marker->timeline->reached(marker->ticket)) {
            return fail(HAL_ERROR_NOT_READY, "eventElapsedTime: an event has not completed yet");
        }
    }
    *ms = std::chrono::duration<float, std::milli>(end->reachedAt - start->reachedAt).count();
    return HAL_SUCCESS;
}

}  // namespace polyhal_template
