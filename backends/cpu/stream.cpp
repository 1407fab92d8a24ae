// Stream entries: a worker thread per stream, waits on events, host functions.
#include "stream.hpp"

#include <polyhal/plugin_support.hpp>

#include <optional>
#include <utility>

#include "device.hpp"
#include "entries.hpp"
#include "event.hpp"

namespace polyhal::cpu {

// Less urgent streams' workers get a higher nice value, so the OS favours the urgent ones when
// workers compete for the CPUs.
Stream::Stream(Device& device, int priority)
    : device_(device),
      timeline_(std::make_shared<Timeline>()),
      queue_(*timeline_),
      worker_(queue_, *timeline_, device.blockPool(), priority),
      thread_([this, niceIncrement = priority - kGreatestStreamPriority] {
          worker_.run(niceIncrement);
          unreference();  // the last touch of the stream by this thread
      }) {}

std::thread Stream::release() {
    std::thread worker = std::move(thread_);  // the stream may be gone once it is unreferenced
    queue_.close();
    unreference();
    return worker;
}

void Stream::unreference() {
    if (owners_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

halError streamCreate(halPluginDevice device, int priority, uint32_t /*flags: none defined*/,
                      halPluginStream* stream) {
    *stream = plugin::toHandle(plugin::fromHandle<Device>(device).createStream(priority));
    return HAL_SUCCESS;
}

halError streamDestroy(halPluginStream stream) {
    Stream& self = plugin::fromHandle<Stream>(stream);
    self.device().destroyStream(self);
    return HAL_SUCCESS;
}

halError streamSynchronize(halPluginStream stream) {
    Timeline& timeline = *plugin::fromHandle<Stream>(stream).timeline();
    timeline.wait(timeline.submitted(), WaitPolicy::kSpinThenSleep);
    if (std::optional<Failure> failure = timeline.takePendingFailure()) return report(*failure);
    return HAL_SUCCESS;
}

halError streamQuery(halPluginStream stream) {
    Timeline& timeline = *plugin::fromHandle<Stream>(stream).timeline();
    // Idle first: a failure is recorded before its command completes, so once the work is
    // seen finished, its failure is seen too.
    const bool idle = timeline.reached(timeline.submitted());
    if (std::optional<Failure> failure = timeline.takePendingFailure()) return report(*failure);
    return idle ? HAL_SUCCESS : HAL_ERROR_NOT_READY;
}

halError streamWaitEvent(halPluginStream stream, halPluginEvent event) {
    Stream& self = plugin::fromHandle<Stream>(stream);
    if (const auto& shared = plugin::fromHandle<EventHandle>(event).event->shared()) {
        const uint32_t generation = shared->latest();
        if (!shared->reached(generation)) self.submit(SharedEventWait{shared, generation});
        return HAL_SUCCESS;
    }
    std::optional<TimelinePoint> point = plugin::fromHandle<EventHandle>(event).event->lastRecord();
    // Nothing to wait for: never recorded, already done, or earlier work of this very
    // stream, which runs in order anyway.
    if (!point || point->timeline == self.timeline() || point->timeline->reached(point->ticket)) {
        return HAL_SUCCESS;
    }
    self.submit(TimelineWait{std::move(*point)});
    return HAL_SUCCESS;
}

halError launchHostFunc(halPluginStream stream, halHostFn fn, void* userData) {
    plugin::fromHandle<Stream>(stream).submit(HostCall{fn, userData});
    return HAL_SUCCESS;
}

halError streamGetNativeHandle(halPluginStream stream, void** native) {
    *native = &plugin::fromHandle<Stream>(stream);
    return HAL_SUCCESS;
}

}  // namespace polyhal::cpu
