// Events: a point in a stream, captured as (timeline, ticket), plus the time the stream's
// worker reached it.
#ifndef POLYHAL_BACKENDS_CPU_EVENT_HPP_
#define POLYHAL_BACKENDS_CPU_EVENT_HPP_

#include <polyhal/plugin.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "engine/notifier.hpp"
#include "plugin_common/shared_event.hpp"
#include "engine/timeline.hpp"

namespace polyhal::cpu {

class Stream;

class Event {
  public:
    explicit Event(uint32_t flags) : flags_(flags) {}
    // An event shared with other processes (HAL_EVENT_INTERPROCESS): its records live in
    // `shared`, and record() publishes there instead of keeping a timeline point.
    Event(uint32_t flags, std::shared_ptr<SharedEventState> shared)
        : flags_(flags), shared_(std::move(shared)) {}

    const std::shared_ptr<SharedEventState>& shared() const { return shared_; }

    bool timed() const { return (flags_ & HAL_EVENT_DISABLE_TIMING) == 0; }
    WaitPolicy waitPolicy() const {
        return (flags_ & HAL_EVENT_BLOCKING_SYNC) != 0 ? WaitPolicy::kSleep
                                                       : WaitPolicy::kSpinThenSleep;
    }

    // Captures the work submitted to `stream` so far, replacing the previous record. A timed
    // event enqueues a marker that stamps the time when the worker reaches it; `self` is the
    // reference the marker keeps. Throws std::bad_alloc when the marker cannot be queued.
    void record(Stream& stream, const std::shared_ptr<Event>& self);

    // The last record, or nullopt if the event was never recorded.
    std::optional<TimelinePoint> lastRecord() const;

    // Worker side, from the marker of record `generation`: a marker of an older record must not
    // overwrite the timestamp of the newer one.
    void stamp(uint64_t generation, int64_t nanoseconds);

    // The last record's timestamp, once its marker has run.
    std::optional<int64_t> timestamp() const;

  private:
    const uint32_t flags_;
    const std::shared_ptr<SharedEventState> shared_;
    mutable std::mutex mutex_;
    bool recorded_ = false;
    TimelinePoint point_;
    uint64_t generation_ = 0;
    std::optional<int64_t> timestamp_;
};

// What a halPluginEvent points to: the handle's reference to the event. Markers and waits hold
// their own references, so destroying the handle never invalidates queued work.
struct EventHandle {
    using Handle = halPluginEvent;
    std::shared_ptr<Event> event;
};

// Monotonic time in nanoseconds: the clock of event timestamps.
int64_t monotonicNanoseconds();

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_EVENT_HPP_
