// Streams, stream callbacks and events.
#include <algorithm>
#include <chrono>

#include "runtime.hpp"

using namespace polyhal::doubles;
using namespace polyhal::doubles::hip;

namespace {

std::shared_ptr<Marker> lastRecord(hipEvent_t event) {
    std::lock_guard<std::mutex> lock(event->mutex);
    return event->last;
}

}  // namespace

extern "C" {

// ---- Streams ----

hipError_t hipStreamCreateWithPriority(hipStream_t* handle, unsigned int flags, int priority) {
    ENTER();
    if (flags != hipStreamDefault && flags != hipStreamNonBlocking) return hipErrorInvalidValue;
    // Priorities order nothing here: every stream has a thread of its own.
    (void)priority;
    auto stream = std::make_shared<ihipStream_t>();
    stream->device = currentDevice();
    *handle = stream.get();
    Device& device = *g_devices[static_cast<size_t>(currentDevice())];
    {
        std::lock_guard<std::mutex> lock(device.mutex);
        auto& streams = device.streams;
        streams.erase(
            std::remove_if(streams.begin(), streams.end(),
                           [](const auto& old) { return old->destroyed && old->timeline.idle(); }),
            streams.end());
        streams.push_back(std::move(stream));
    }
    g_handles.add(*handle, kStream);
    return hipSuccess;
}

// Returns at once; the stream's work still runs.
hipError_t hipStreamDestroy(hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream)->destroyed = true;
    g_handles.remove(stream);
    return hipSuccess;
}

hipError_t hipStreamSynchronize(hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream)->timeline.synchronize();
    return g_devices[static_cast<size_t>(stream->device)]->sticky.load();
}

hipError_t hipStreamQuery(hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream);
    if (hipError_t sticky = g_devices[static_cast<size_t>(stream->device)]->sticky.load()) {
        return sticky;
    }
    return stream->timeline.idle() ? hipSuccess : hipErrorNotReady;
}

// The event may be of another device.
hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags) {
    ENTER();
    requireLive(__func__, stream, kStream);
    requireLive(__func__, event, kEvent);
    if (flags != 0) return hipErrorInvalidValue;
    if (std::shared_ptr<Marker> last = lastRecord(event)) stream->timeline.waitFor(std::move(last));
    return hipSuccess;
}

hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback, void* userData,
                                unsigned int flags) {
    ENTER();
    requireLive(__func__, stream, kStream);
    if (callback == nullptr || flags != 0) return hipErrorInvalidValue;
    struct Call {
        hipStream_t stream;
        hipStreamCallback_t callback;
        void* userData;
    };
    auto* call = new Call{stream, callback, userData};
    stream->timeline.submitHostFunction(
        [](void* pending) {
            const std::unique_ptr<Call> owned(static_cast<Call*>(pending));
            owned->callback(owned->stream, hipSuccess, owned->userData);
        },
        call);
    return hipSuccess;
}

// ---- Events ----

hipError_t hipEventCreateWithFlags(hipEvent_t* handle, unsigned flags) {
    ENTER();
    if ((flags & ~(hipEventBlockingSync | hipEventDisableTiming | hipEventInterprocess)) != 0) {
        return hipErrorInvalidValue;
    }
    auto* event = new ihipEvent_t{currentDevice(), flags, {}, nullptr};
    g_handles.add(event, kEvent);
    *handle = event;
    return hipSuccess;
}

hipError_t hipEventDestroy(hipEvent_t event) {
    ENTER();
    requireLive(__func__, event, kEvent);
    g_handles.remove(event);
    delete event;
    return hipSuccess;
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
    ENTER();
    requireLive(__func__, event, kEvent);
    requireLive(__func__, stream, kStream);
    requireSameDevice(__func__, event->device, "the event", stream->device, "the stream");
    std::shared_ptr<Marker> marker = stream->timeline.mark();
    std::lock_guard<std::mutex> lock(event->mutex);
    event->last = std::move(marker);
    return hipSuccess;
}

hipError_t hipEventQuery(hipEvent_t event) {
    ENTER();
    requireLive(__func__, event, kEvent);
    const std::shared_ptr<Marker> last = lastRecord(event);
    return last && !last->done() ? hipErrorNotReady : hipSuccess;
}

hipError_t hipEventSynchronize(hipEvent_t event) {
    ENTER();
    requireLive(__func__, event, kEvent);
    if (const std::shared_ptr<Marker> last = lastRecord(event)) last->wait();
    return hipSuccess;
}

hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t end) {
    ENTER();
    requireLive(__func__, start, kEvent);
    requireLive(__func__, end, kEvent);
    if (ms == nullptr) return hipErrorInvalidValue;
    if (((start->flags | end->flags) & hipEventDisableTiming) != 0) return hipErrorInvalidHandle;
    const std::shared_ptr<Marker> first = lastRecord(start);
    const std::shared_ptr<Marker> second = lastRecord(end);
    if (!first || !second) return hipErrorInvalidHandle;
    if (!first->done() || !second->done()) return hipErrorNotReady;
    *ms = std::chrono::duration<float, std::milli>(second->time() - first->time()).count();
    return hipSuccess;
}

}  // extern "C"
