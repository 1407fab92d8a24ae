// Streams, host functions and events, interprocess events included.
#include <chrono>
#include <cstring>

#include "driver.hpp"

using namespace polyhal::doubles;
using namespace polyhal::doubles::cuda;

extern "C" {

// ---- Streams ----

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* handle, unsigned int flags, int priority) {
    ENTER();
    CUctx_st* context = requireCurrent(__func__);
    if (flags != CU_STREAM_DEFAULT && flags != CU_STREAM_NON_BLOCKING)
        return CUDA_ERROR_INVALID_VALUE;
    // Priorities order nothing here: every stream has a thread of its own.
    (void)priority;
    {
        std::lock_guard<std::mutex> lock(context->mutex);
        // Destroyed streams that have drained go now, and give their hardware queue back.
        auto& streams = context->streams;
        streams.erase(
            std::remove_if(streams.begin(), streams.end(),
                           [](const auto& old) { return old->destroyed && old->timeline.idle(); }),
            streams.end());
        auto stream = std::make_shared<CUstream_st>(context, context->queues.acquire());
        *handle = stream.get();
        streams.push_back(std::move(stream));
    }
    g_handles.add(*handle, kStream);
    return CUDA_SUCCESS;
}

// Returns at once; the stream's work still runs (the context keeps the stream until released).
// The stream knows its context: any context, or none, may be current.
CUresult CUDAAPI cuStreamDestroy(CUstream stream) {
    ENTER();
    requireLive(__func__, stream, kStream)->destroyed = true;
    g_handles.remove(stream);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream handle) {
    ENTER_UNSAFE_DURING_CAPTURE();
    CUstream_st* stream = requireStream(__func__, handle);
    stream->timeline.synchronize();
    return stream->context->sticky.load();
}

CUresult CUDAAPI cuStreamQuery(CUstream handle) {
    ENTER_UNSAFE_DURING_CAPTURE();
    CUstream_st* stream = requireStream(__func__, handle);
    if (CUresult sticky = stream->context->sticky.load()) return sticky;
    return stream->timeline.idle() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

// The event may belong to another context: CUDA allows cross-device waits.
CUresult CUDAAPI cuStreamWaitEvent(CUstream handle, CUevent event, unsigned int flags) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, handle);
    requireLive(__func__, event, kEvent);
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (event->shared) {
        event->shared->requireUsable(kVendor, __func__);
        event->shared->enqueueWait(stream->timeline);
        return CUDA_SUCCESS;
    }
    std::shared_ptr<Marker> last;
    {
        std::lock_guard<std::mutex> lock(event->mutex);
        last = event->last;
    }
    if (last) stream->timeline.waitFor(std::move(last));
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream handle, CUhostFn fn, void* userData) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, handle);
    if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
    stream->timeline.submitHostFunction(fn, userData);
    return CUDA_SUCCESS;
}

// ---- Events ----

CUresult CUDAAPI cuEventCreate(CUevent* handle, unsigned int flags) {
    ENTER();
    CUctx_st* context = requireCurrent(__func__);
    if ((flags & ~(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)) !=
        0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    std::shared_ptr<IpcEvent> shared;
    if ((flags & CU_EVENT_INTERPROCESS) != 0) {
        // The driver's documented requirement for an interprocess event.
        if ((flags & CU_EVENT_DISABLE_TIMING) == 0) return CUDA_ERROR_INVALID_VALUE;
        shared = IpcEvent::create();
        if (shared == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    }
    auto* event = new CUevent_st{context, flags, {}, nullptr, std::move(shared)};
    g_handles.add(event, kEvent);
    *handle = event;
    return CUDA_SUCCESS;
}

// Waits already enqueued on the event keep their point in the stream. The exporter's destruction
// of an interprocess event ends its use in the processes that opened it.
CUresult CUDAAPI cuEventDestroy(CUevent event) {
    ENTER();
    requireLive(__func__, event, kEvent);
    g_handles.remove(event);
    if (event->shared) event->shared->destroyed();
    delete event;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream handle) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, handle);
    requireLive(__func__, event, kEvent);
    requireOwnContext(__func__, event->context, "the event");
    if (event->shared) {
        event->shared->requireUsable(kVendor, __func__);
        event->shared->record(stream->timeline);
        return CUDA_SUCCESS;
    }
    std::shared_ptr<Marker> marker = stream->timeline.mark();
    std::lock_guard<std::mutex> lock(event->mutex);
    event->last = std::move(marker);
    return CUDA_SUCCESS;
}

static std::shared_ptr<Marker> lastRecord(CUevent event) {
    std::lock_guard<std::mutex> lock(event->mutex);
    return event->last;
}

CUresult CUDAAPI cuEventQuery(CUevent event) {
    ENTER_UNSAFE_DURING_CAPTURE();
    requireLive(__func__, event, kEvent);
    if (event->shared) {
        event->shared->requireUsable(kVendor, __func__);
        if (!event->shared->done()) return CUDA_ERROR_NOT_READY;
        return event->context->sticky.load();
    }
    const std::shared_ptr<Marker> last = lastRecord(event);
    if (last && !last->done()) return CUDA_ERROR_NOT_READY;
    return event->context->sticky.load();
}

CUresult CUDAAPI cuEventSynchronize(CUevent event) {
    ENTER_UNSAFE_DURING_CAPTURE();
    requireLive(__func__, event, kEvent);
    if (event->shared) {
        event->shared->requireUsable(kVendor, __func__);
        event->shared->synchronize();
    } else if (const std::shared_ptr<Marker> last = lastRecord(event)) {
        last->wait();
    }
    return event->context->sticky.load();
}

static CUresult elapsedTime(const char* function, float* ms, CUevent start, CUevent end) {
    if (CUresult entered = enter(function)) return entered;
    requireLive(function, start, kEvent);
    requireLive(function, end, kEvent);
    if (ms == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING) != 0)
        return CUDA_ERROR_INVALID_HANDLE;
    const std::shared_ptr<Marker> first = lastRecord(start);
    const std::shared_ptr<Marker> second = lastRecord(end);
    if (!first || !second) return CUDA_ERROR_INVALID_HANDLE;
    if (!first->done() || !second->done()) return CUDA_ERROR_NOT_READY;
    *ms = std::chrono::duration<float, std::milli>(second->time() - first->time()).count();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
    return elapsedTime(__func__, ms, start, end);
}

#if POLYHAL_CUDA_DOUBLE_VERSION >= 12080
CUresult CUDAAPI cuEventElapsedTime_v2(float* ms, CUevent start, CUevent end) {
    return elapsedTime(__func__, ms, start, end);
}
#endif

// ---- Interprocess events ----

static_assert(sizeof(IpcName) <= sizeof(CUipcEventHandle), "a name must fit the driver's handle");

// Only an event created with CU_EVENT_INTERPROCESS (and so CU_EVENT_DISABLE_TIMING) is exported.
CUresult CUDAAPI cuIpcGetEventHandle(CUipcEventHandle* handle, CUevent event) {
    ENTER();
    requireCurrent(__func__);
    requireLive(__func__, event, kEvent);
    if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!event->shared) {
        breach(kVendor, "cuIpcGetEventHandle: event %p was created without CU_EVENT_INTERPROCESS",
               static_cast<const void*>(event));
    }
    event->shared->requireUsable(kVendor, __func__);
    if (ipcEventsSupported(event->context->device) == 0) return CUDA_ERROR_NOT_SUPPORTED;
    const IpcName name = event->shared->name(event->context->device);
    std::memset(handle, 0, sizeof *handle);
    std::memcpy(handle, &name, sizeof name);
    return CUDA_SUCCESS;
}

// The opened event behaves as one created in the current context with CU_EVENT_DISABLE_TIMING;
// a handle exported by this very process is refused, as the driver refuses it.
CUresult CUDAAPI cuIpcOpenEventHandle(CUevent* handle, CUipcEventHandle exported) {
    ENTER();
    CUctx_st* context = requireCurrent(__func__);
    if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
    IpcName name;
    std::memcpy(&name, &exported, sizeof name);
    std::shared_ptr<IpcEvent> shared;
    switch (IpcEvent::open(name, &shared)) {
    case IpcOpenStatus::kOpened: break;
    case IpcOpenStatus::kSameProcess: return CUDA_ERROR_INVALID_CONTEXT;
    case IpcOpenStatus::kGone:
    case IpcOpenStatus::kNotAName: return CUDA_ERROR_INVALID_VALUE;
    }
    auto* event = new CUevent_st{
        context, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING, {}, nullptr, std::move(shared)};
    g_handles.add(event, kEvent);
    *handle = event;
    return CUDA_SUCCESS;
}

}  // extern "C"
