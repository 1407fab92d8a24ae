// Streams, stream callbacks and events, interprocess events included.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "runtime.hpp"

using namespace polyhal::doubles;
using namespace polyhal::doubles::hip;

namespace {

std::shared_ptr<Marker> lastRecord(hipEvent_t event) {
    std::lock_guard<std::mutex> lock(event->mutex);
    return event->last;
}

// The runtime reads the stream of the event's last record, which must still exist.
void requireRecordStreamLive(const char* function, hipEvent_t event) {
    std::lock_guard<std::mutex> lock(event->mutex);
    if (event->recordedOn && event->recordedOn->destroyed) {
        breach(kVendor,
               "%s: the event's last record was on a stream destroyed since, which the runtime "
               "reads (its capture status)",
               function);
    }
}

}  // namespace

extern "C" {

// ---- Streams ----

hipError_t hipStreamCreateWithPriority(hipStream_t* handle, unsigned int flags, int priority) {
    ENTER();
    if (flags != hipStreamDefault && flags != hipStreamNonBlocking) return hipErrorInvalidValue;
    // Priorities order nothing here: every stream has a thread of its own.
    (void)priority;
    Device& device = *g_devices[static_cast<size_t>(currentDevice())];
    {
        std::lock_guard<std::mutex> lock(device.mutex);
        // Destroyed streams that have drained go now, and give their hardware queue back.
        auto& streams = device.streams;
        streams.erase(
            std::remove_if(streams.begin(), streams.end(),
                           [](const auto& old) { return old->destroyed && old->timeline.idle(); }),
            streams.end());
        auto stream = std::make_shared<ihipStream_t>(currentDevice(), device.queues.acquire());
        *handle = stream.get();
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
    return hipSuccess;
}

hipError_t hipStreamQuery(hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream);
    return stream->timeline.idle() ? hipSuccess : hipErrorNotReady;
}

// The event may be of another device.
hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags) {
    ENTER();
    requireLive(__func__, stream, kStream);
    requireLive(__func__, event, kEvent);
    if (flags != 0) return hipErrorInvalidValue;
    if (event->shared) {
        event->shared->requireUsable(kVendor, __func__);
        event->shared->enqueueWait(stream->timeline);
        return hipSuccess;
    }
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
    std::shared_ptr<IpcEvent> shared;
    if ((flags & hipEventInterprocess) != 0) {
        // The runtime's documented requirement for an interprocess event.
        if ((flags & hipEventDisableTiming) == 0) return hipErrorInvalidValue;
        shared = IpcEvent::create();
        if (shared == nullptr) return hipErrorOutOfMemory;
    }
    auto* event = new ihipEvent_t{currentDevice(), flags, {}, nullptr, std::move(shared), nullptr};
    g_handles.add(event, kEvent);
    *handle = event;
    return hipSuccess;
}

// The exporter's destruction of an interprocess event ends its use in the processes that opened
// it.
hipError_t hipEventDestroy(hipEvent_t event) {
    ENTER();
    requireLive(__func__, event, kEvent);
    g_handles.remove(event);
    if (event->shared) event->shared->destroyed();
    delete event;
    return hipSuccess;
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
    ENTER();
    requireLive(__func__, event, kEvent);
    requireLive(__func__, stream, kStream);
    requireSameDevice(__func__, event->device, "the event", stream->device, "the stream");
    if (event->shared) {
        event->shared->requireUsable(kVendor, __func__);
        event->shared->record(stream->timeline);
        return hipSuccess;
    }
    std::shared_ptr<Marker> marker = stream->timeline.mark();
    std::lock_guard<std::mutex> lock(event->mutex);
    event->last = std::move(marker);
    event->recordedOn = stream->shared_from_this();
    return hipSuccess;
}

hipError_t hipEventQuery(hipEvent_t event) {
    ENTER();
    requireLive(__func__, event, kEvent);
    if (event->shared) {
        event->shared->requireUsable(kVendor, __func__);
        return event->shared->done() ? hipSuccess : hipErrorNotReady;
    }
    requireRecordStreamLive(__func__, event);
    const std::shared_ptr<Marker> last = lastRecord(event);
    return last && !last->done() ? hipErrorNotReady : hipSuccess;
}

hipError_t hipEventSynchronize(hipEvent_t event) {
    ENTER();
    requireLive(__func__, event, kEvent);
    if (event->shared) {
        event->shared->requireUsable(kVendor, __func__);
        event->shared->synchronize();
        return hipSuccess;
    }
    requireRecordStreamLive(__func__, event);
    if (const std::shared_ptr<Marker> last = lastRecord(event)) {
        last->wait();
    }
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

// ---- Interprocess events ----

static_assert(sizeof(IpcName) <= sizeof(hipIpcEventHandle_t), "a name must fit the handle");

// Only an event created with hipEventInterprocess (and so hipEventDisableTiming) is exported.
hipError_t hipIpcGetEventHandle(hipIpcEventHandle_t* handle, hipEvent_t event) {
    ENTER();
    requireLive(__func__, event, kEvent);
    if (handle == nullptr) return hipErrorInvalidValue;
    if (!event->shared) {
        breach(kVendor, "hipIpcGetEventHandle: event %p was created without hipEventInterprocess",
               static_cast<const void*>(event));
    }
    event->shared->requireUsable(kVendor, __func__);
    const IpcName name = event->shared->name(event->device);
    std::memset(handle, 0, sizeof *handle);
    std::memcpy(handle, &name, sizeof name);
    return hipSuccess;
}

// The opened event belongs to the current device and behaves as one created with
// hipEventDisableTiming; a handle exported by this very process is refused, as HIP documents.
hipError_t hipIpcOpenEventHandle(hipEvent_t* handle, hipIpcEventHandle_t exported) {
    ENTER();
    if (handle == nullptr) return hipErrorInvalidValue;
    IpcName name;
    std::memcpy(&name, &exported, sizeof name);
    std::shared_ptr<IpcEvent> shared;
    switch (IpcEvent::open(name, &shared)) {
    case IpcOpenStatus::kOpened: break;
    case IpcOpenStatus::kSameProcess: return hipErrorInvalidContext;
    case IpcOpenStatus::kGone:
    case IpcOpenStatus::kNotAName: return hipErrorInvalidValue;
    }
    auto* event = new ihipEvent_t{currentDevice(),
                                  hipEventInterprocess | hipEventDisableTiming,
                                  {},
                                  nullptr,
                                  std::move(shared),
                                  nullptr};
    g_handles.add(event, kEvent);
    *handle = event;
    return hipSuccess;
}

}  // extern "C"
