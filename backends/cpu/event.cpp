// Event entries: events as points on a stream's timeline, timing and IPC events.
#include "event.hpp"

#include <polyhal/plugin_support.hpp>

#include <chrono>
#include <new>

#include "engine/command.hpp"
#include "entries.hpp"
#include "stream.hpp"

namespace polyhal::cpu {

int64_t monotonicNanoseconds() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void Event::record(Stream& stream, const std::shared_ptr<Event>& self) {
    if (shared_ != nullptr) {
        const uint32_t generation = shared_->beginRecord();
        try {
            stream.submit(SharedEventSignal{shared_, generation});
        } catch (...) {
            shared_->publish(generation);  // nothing was captured: let no waiter hang on it
            throw;
        }
        return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t ticket;
    if (timed()) {
        // The marker cannot stamp before this returns: stamp() takes the same lock.
        const uint64_t generation = generation_ + 1;
        ticket = stream.submit(EventMarker{self, generation});
        generation_ = generation;
    } else {
        ticket = stream.timeline()->submitted();  // no timestamp, so no marker is needed
    }
    point_ = TimelinePoint{stream.timeline(), ticket};
    recorded_ = true;
    timestamp_.reset();
}

std::optional<TimelinePoint> Event::lastRecord() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!recorded_) return std::nullopt;
    return point_;
}

void Event::stamp(uint64_t generation, int64_t nanoseconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (generation == generation_) timestamp_ = nanoseconds;
}

std::optional<int64_t> Event::timestamp() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return timestamp_;
}

namespace {

// The state of the work the event captured, as eventQuery reports it. Whether that work failed
// is the stream's to report (plugin.h), so an event never returns a failure.
halError status(const TimelinePoint& point) {
    return point.timeline->reached(point.ticket) ? HAL_SUCCESS : HAL_ERROR_NOT_READY;
}

}  // namespace

halError eventCreate(halPluginDevice /*device*/, uint32_t flags, halPluginEvent* event) {
    std::shared_ptr<SharedEventState> shared;
    if ((flags & HAL_EVENT_INTERPROCESS) != 0) {
        if (halError e = SharedEventState::create(&shared)) return e;
    }
    auto handle = std::make_unique<EventHandle>(
        EventHandle{std::make_shared<Event>(flags, std::move(shared))});
    *event = plugin::toHandle(handle.release());
    return HAL_SUCCESS;
}

halError eventDestroy(halPluginEvent event) {
    // Queued markers and waits keep their own references.
    return plugin::destroyHandle<EventHandle>(event);
}

halError eventRecord(halPluginEvent event, halPluginStream stream) {
    const std::shared_ptr<Event>& self = plugin::fromHandle<EventHandle>(event).event;
    self->record(plugin::fromHandle<Stream>(stream), self);
    return HAL_SUCCESS;
}

halError eventQuery(halPluginEvent event) {
    if (const auto& shared = plugin::fromHandle<EventHandle>(event).event->shared()) {
        return shared->reached(shared->latest()) ? HAL_SUCCESS : HAL_ERROR_NOT_READY;
    }
    const std::optional<TimelinePoint> point =
        plugin::fromHandle<EventHandle>(event).event->lastRecord();
    return point ? status(*point) : HAL_SUCCESS;
}

halError eventSynchronize(halPluginEvent event) {
    const Event& self = *plugin::fromHandle<EventHandle>(event).event;
    if (const auto& shared = self.shared()) {
        shared->wait(shared->latest());
        return HAL_SUCCESS;
    }
    const std::optional<TimelinePoint> point = self.lastRecord();
    if (!point) return HAL_SUCCESS;
    point->timeline->wait(point->ticket, self.waitPolicy());
    return status(*point);
}

halError ipcEventGetHandle(halPluginEvent event, halPluginIpcHandle* handle) {
    const std::shared_ptr<SharedEventState>& shared =
        plugin::fromHandle<EventHandle>(event).event->shared();
    if (shared == nullptr) {
        return plugin::fail(HAL_ERROR_INVALID_VALUE,
                            "the event was created without HAL_EVENT_INTERPROCESS");
    }
    shared->exportTo(handle);
    return HAL_SUCCESS;
}

halError ipcEventOpenHandle(halPluginDevice /*device*/, const halPluginIpcHandle* handle,
                            halPluginEvent* event) {
    std::shared_ptr<SharedEventState> shared;
    if (halError e = SharedEventState::open(*handle, &shared)) return e;
    auto opened = std::make_unique<EventHandle>(EventHandle{std::make_shared<Event>(
        HAL_EVENT_INTERPROCESS | HAL_EVENT_DISABLE_TIMING, std::move(shared))});
    *event = plugin::toHandle(opened.release());
    return HAL_SUCCESS;
}

halError eventElapsedTime(float* ms, halPluginEvent start, halPluginEvent end) {
    const Event* events[] = {plugin::fromHandle<EventHandle>(start).event.get(),
                             plugin::fromHandle<EventHandle>(end).event.get()};
    int64_t nanoseconds[2];
    for (int i = 0; i < 2; ++i) {
        const char* which = i == 0 ? "start" : "end";
        if (!events[i]->timed()) {
            return plugin::fail(HAL_ERROR_INVALID_VALUE,
                                "the %s event was created with HAL_EVENT_DISABLE_TIMING", which);
        }
        const std::optional<TimelinePoint> point = events[i]->lastRecord();
        if (!point) {
            return plugin::fail(HAL_ERROR_INVALID_VALUE, "the %s event was never recorded", which);
        }
        // Read the timestamp only once the record is known complete: a record made after
        // the completion check would reset it.
        const std::optional<int64_t> stamped =
            point->timeline->reached(point->ticket) ? events[i]->timestamp() : std::nullopt;
        if (!stamped) {
            return plugin::fail(HAL_ERROR_NOT_READY, "the %s event has not completed yet", which);
        }
        nanoseconds[i] = *stamped;
    }
    *ms = static_cast<float>(static_cast<double>(nanoseconds[1] - nanoseconds[0]) / 1e6);
    return HAL_SUCCESS;
}

}  // namespace polyhal::cpu
