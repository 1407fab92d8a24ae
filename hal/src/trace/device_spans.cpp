// Device spans: each traced stream operation timed by the device's clock through two events
// recorded around it, where the plugin reads it (eventCompletionTime), or else by host functions
// enqueued around it.
#include <algorithm>
#include <memory>
#include <mutex>

#include "../device.hpp"
#include "../error.hpp"
#include "../objects.hpp"
#include "tracks.hpp"

namespace polyhal::trace {

namespace {

// Runs a host function of the trace (plugin.h's signature) on `stream`; false where the backend
// runs none or refused this one. A refusal's detail is dropped: it must not become the message of
// the application's next failing call.
bool enqueueHostFunction(halStream_t* stream, halHostFn fn, void* data) {
    const Device* device = stream->device;
    if (!device->supports(HAL_DEVICE_CAP_HOST_FUNCTIONS) ||
        device->vtable->launchHostFunc == nullptr) {
        return false;
    }
    const halError status = device->vtable->launchHostFunc(stream->native, fn, data);
    if (status == HAL_SUCCESS) return true;
    takePluginErrorMessage(status, device->backend->name.c_str(), "tracing");
    return false;
}

// Records a new event of the trace's own on `stream`, for the device's clock to time the
// operations around it; false, having made nothing, where the plugin cannot read that clock or
// refused a step.
bool recordClockEvent(halStream_t* stream, halPluginEvent* event) {
    const Device* device = stream->device;
    const halPluginDispatchTable* plugin = device->vtable;
    if (plugin->eventCompletionTime == nullptr || !device->supports(HAL_DEVICE_CAP_TIMING_EVENTS)) {
        return false;
    }
    halPluginEvent created = nullptr;
    halError status = plugin->eventCreate(device->native, HAL_EVENT_DEFAULT, &created);
    if (status == HAL_SUCCESS) {
        status = plugin->eventRecord(created, stream->native);
        if (status != HAL_SUCCESS) plugin->eventDestroy(created);
    }
    if (status != HAL_SUCCESS) {
        takePluginErrorMessage(status, device->backend->name.c_str(), "tracing");
        return false;
    }
    *event = created;
    return true;
}

}  // namespace

// One operation's device span: a host function enqueued before the operation notes when the
// stream reached it, one enqueued behind it when it completed. Shared by the two host functions
// and the submitting call, and freed by the last of them.
struct Timing {
    std::atomic<int> owners{1};
    std::atomic<uint64_t> started{0};  // 0 until the host function before the operation ran
    // The events recorded right before and right after the operation, where the device's clock
    // times it (then no host function runs before it); destroyed with the timing.
    const halPluginDispatchTable* plugin = nullptr;
    halPluginEvent before = nullptr;
    halPluginEvent after = nullptr;
    std::shared_ptr<StreamTrack> track;
    uint64_t session;
    uint64_t submitted;  // the submitting call's start
    const char* name = nullptr;
    const char* operation = nullptr;
    bool kernel = false;  // a kernel launch: `name` is the kernel's
    int64_t bytes = -1;

    ~Timing() {
        if (before != nullptr) plugin->eventDestroy(before);
        if (after != nullptr) plugin->eventDestroy(after);
    }

    void release() {
        if (owners.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }

    // The operation's start and completion on the device's clock; false where it is not timed
    // so or the plugin cannot tell.
    bool deviceClock(uint64_t* start, uint64_t* end) const {
        return after != nullptr && plugin->eventCompletionTime(before, start) == HAL_SUCCESS &&
               plugin->eventCompletionTime(after, end) == HAL_SUCCESS;
    }
};

namespace {

void runStartMarker(void* pending) {
    Timing* timing = static_cast<Timing*>(pending);
    timing->started.store(now(), std::memory_order_release);
    timing->release();
}

// Runs in stream order right after the operation. Timed by the device's clock, the operation
// ran between the completions of the events around it; otherwise it completed now, and started
// when the host function before it ran, or failing that (the backend refused that one), when it
// was submitted or when the operation before it completed, whichever is later. Device times are
// kept within what the host saw (submitted before, completed by now), which the offset between
// the clocks could otherwise blur by microseconds.
void runEndMarker(void* pending) {
    Timing* timing = static_cast<Timing*>(pending);
    const uint64_t hostNow = now();
    uint64_t deviceStart = 0, deviceEnd = 0;
    const bool deviceClock = timing->deviceClock(&deviceStart, &deviceEnd);
    uint64_t end = deviceClock ? std::clamp(deviceEnd, timing->submitted, hostNow) : hostNow;
    StreamTrack& track = *timing->track;
    Record span;
    span.phase = 'X';
    span.name = timing->name;
    span.category = "device";
    span.pid = track.pid;
    span.tid = track.tid;
    const uint64_t started = deviceClock ? std::max(deviceStart, timing->submitted)
                                         : timing->started.load(std::memory_order_acquire);
    {
        std::lock_guard<std::mutex> lock(track.mutex);
        const uint64_t previous = track.lastSession == timing->session ? track.lastEnd : 0;
        end = std::max(end, previous);
        span.ts = started != 0 ? started : std::max(previous, timing->submitted);
        // Threads submitting to one stream at once may interleave their markers: another
        // operation can run between this one's start marker and the operation, so the span
        // starts where the stream's previous span ended at the earliest. Spans never overlap.
        span.ts = std::min(std::max(span.ts, previous), end);
        track.lastStart = span.ts;
        track.lastEnd = end;
        track.lastSession = timing->session;
        if (timing->kernel) {
            track.lastKernel = timing->name;
            track.lastKernelEnd = end;
            track.lastKernelSession = timing->session;
        }
    }
    span.dur = end - span.ts;
    size_t arg = 0;
    span.args[arg++] = Arg{"operation", timing->operation};
    span.args[arg++] = Arg{"queuedNs", nullptr,
                           static_cast<int64_t>(span.ts - std::min(span.ts, timing->submitted))};
    if (timing->bytes >= 0) span.args[arg++] = Arg{"bytes", nullptr, timing->bytes};
    span.args[arg++] = Arg{"clock", deviceClock ? "device" : "host functions"};
    emit(span, timing->session);
    timing->release();
}

}  // namespace

namespace slow {

Timing* beforeSubmit(halStream_t* stream) noexcept {
    Call* call = t_call;
    if (call == nullptr) return nullptr;
    try {
        auto* timing = new Timing();
        timing->track = trackOf(stream, call->session);
        timing->session = call->session;
        timing->submitted = call->start;
        timing->owners.store(2, std::memory_order_relaxed);
        if (recordClockEvent(stream, &timing->before)) {
            timing->plugin = stream->device->vtable;
            timing->release();  // no start marker
        } else if (!enqueueHostFunction(stream, runStartMarker, timing)) {
            timing->release();
        }
        return timing;
    } catch (...) {
        return nullptr;
    }
}

void submitted(halStream_t* stream, const char* operation, Timing* timing) noexcept {
    if (Call* call = t_call) {
        timing->name = call->kernel != nullptr ? call->kernel : operation;
        timing->kernel = call->kernel != nullptr;
        timing->bytes = call->bytes;
    } else {
        timing->name = operation;
    }
    timing->operation = operation;
    if (timing->before != nullptr) recordClockEvent(stream, &timing->after);
    // The end marker takes the caller's share.
    if (!enqueueHostFunction(stream, runEndMarker, timing)) timing->release();
}

void abandon(Timing* timing) noexcept {
    timing->release();
}

void streamFailed(const halStream_t* stream, const std::string& message) noexcept {
    Call* call = t_call;
    if (call == nullptr) return;
    try {
        StreamTrack& track = *trackOf(stream, call->session);
        Record marker;
        marker.phase = 'i';
        marker.name = "launch failed";
        marker.category = "device";
        marker.pid = track.pid;
        marker.tid = track.tid;
        {
            std::lock_guard<std::mutex> lock(track.mutex);
            const bool kernelSeen = track.lastKernelSession == call->session;
            // At the end of the latest kernel's span, where the backend found the failure;
            // where this trace saw no kernel of the stream finish, when the call found it.
            marker.ts = kernelSeen ? track.lastKernelEnd : now();
            marker.args[1] = Arg{"kernel", kernelSeen ? track.lastKernel : "(not traced)"};
        }
        marker.args[0] = Arg{"error", intern(message)};
        marker.args[2] = Arg{"call", call->function};
        emit(marker, call->session);
    } catch (...) {
        // A trace that cannot note the failure leaves the failure's report as it is.
    }
}

}  // namespace slow

}  // namespace polyhal::trace
