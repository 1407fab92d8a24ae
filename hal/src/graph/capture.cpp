// Implements capture.hpp and capture_mode.hpp: the captures under way, fork and join, the calls
// that invalidate a capture, and graph-owned memory.
#include "capture.hpp"

#include <algorithm>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "call_gate.hpp"
#include "stream_ops.hpp"

namespace polyhal {

// Which work of each stream a point of the capture follows: stream -> how many of its captured
// operations (a vector clock over the capture's streams).
using CaptureClock = std::unordered_map<const halStream_t*, uint64_t>;

struct Capture {
    Device* device;
    halStream_t* origin;
    halCaptureMode mode;
    std::thread::id thread;
    bool invalidated = false;
    CommandList commands;
    // The streams in the capture (the origin and those forked into it), each with the point
    // of the capture it has reached.
    std::unordered_map<halStream_t*, CaptureClock> lanes;
    // Events recorded in the capture, with the point each marks.
    std::unordered_map<halEvent_t*, CaptureClock> events;
    std::vector<void*> ownedMemory;  // from halMallocAsync in the capture, each block once
    std::unordered_map<const void*, size_t> ownedBytes;  // what each owned block was asked for
    // Owned blocks halFreeAsync ended, each with the point of the capture its free marks (the
    // stream and that stream's count of captured operations): a later halMallocAsync of the
    // capture that follows the point takes the block again (reuseFreedBlock).
    struct FreedBlock {
        void* block;
        size_t bytes;
        const halStream_t* stream;
        uint64_t point;
    };
    std::vector<FreedBlock> freed;
};

namespace detail {
std::atomic<int> activeCaptures{0};
std::atomic<int> graphOwnedBlocks{0};
}  // namespace detail

namespace {

// Guards every capture and the links of streams and events to them. Captures are rare and their
// calls few, so one lock serves them all.
std::mutex g_mutex;
std::vector<Capture*> g_captures;
std::unordered_set<const void*> g_graphOwned;

const char* modeName(halCaptureMode mode) {
    switch (enumBits(mode)) {
    case HAL_CAPTURE_MODE_GLOBAL: return "global";
    case HAL_CAPTURE_MODE_THREAD_LOCAL: return "thread-local";
    default: return "relaxed";
    }
}

Capture* captureOf(const halStream_t* stream) {
    return stream->capture.capture.load(std::memory_order_relaxed);
}

// One more captured operation on `stream`: its clock moves past it.
void advance(Capture* capture, halStream_t* stream) {
    CaptureClock& clock = capture->lanes[stream];
    ++clock[stream];
}

halError refuseInvalidated(const Capture* capture, const char* operation) {
    return fail(HAL_ERROR_STREAM_CAPTURE_INVALIDATED,
                "{}: the capture begun on stream {} was invalidated by an earlier error; end it "
                "with halStreamEndCapture and capture again",
                operation, static_cast<const void*>(capture->origin));
}

// The capture `stream` records into, or nullptr after failing: the capture was invalidated, or
// ended while the call was made (a race in the application). Called with g_mutex held.
Capture* liveCapture(const halStream_t* stream, const char* operation, halError* refused) {
    Capture* capture = captureOf(stream);
    if (capture == nullptr) {
        *refused = fail(HAL_ERROR_STREAM_CAPTURE_INVALIDATED,
                        "{}: the capture of stream {} ended while this call was made", operation,
                        static_cast<const void*>(stream));
        return nullptr;
    }
    if (capture->invalidated) {
        *refused = refuseInvalidated(capture, operation);
        return nullptr;
    }
    return capture;
}

// Unlinks `capture` from its streams and events and from the captures under way, and deletes
// it. Returns its graph-owned memory, for the caller to keep or release (after unlocking).
// Its commands go to `commands`, for the caller to destroy after unlocking too: one may hold the
// last reference to a graph whose release takes g_mutex.
std::vector<void*> finish(Capture* capture, CommandList* commands) {
    *commands = std::move(capture->commands);
    for (auto& lane : capture->lanes) lane.first->capture.capture.store(nullptr);
    for (auto& event : capture->events) event.first->capture.capture.store(nullptr);
    g_captures.erase(std::find(g_captures.begin(), g_captures.end(), capture));
    detail::activeCaptures.fetch_sub(1, std::memory_order_relaxed);
    call_gate::release();
    std::vector<void*> memory = std::move(capture->ownedMemory);
    delete capture;
    return memory;
}

// Returns memory a capture that made no graph owned to the pool: no launch ever used it.
void release(halStream_t* stream, const std::vector<void*>& memory) {
    forgetGraphOwned(memory);
    for (void* block : memory) freeBlock(stream, block, "halStreamEndCapture");
}

// Does the origin stream of `capture` follow the last captured work of `stream`, a stream
// forked into it?
bool joinedBack(const Capture& capture, const halStream_t* stream) {
    const CaptureClock& joined = capture.lanes.at(capture.origin);
    const CaptureClock& lane = capture.lanes.at(const_cast<halStream_t*>(stream));
    const auto own = lane.find(stream);
    if (own == lane.end()) return true;  // it captured nothing
    const auto seen = joined.find(stream);
    return seen != joined.end() && seen->second >= own->second;
}

// A stream forked into `capture` whose last captured work the origin stream does not follow,
// or nullptr when every fork was joined back.
const halStream_t* unjoinedStream(const Capture& capture) {
    for (const auto& lane : capture.lanes) {
        if (lane.first != capture.origin && !joinedBack(capture, lane.first)) return lane.first;
    }
    return nullptr;
}

// Forgets `stream`, forked into `capture` and joined back, as it is destroyed: no clock of the
// capture names it any more, so a stream made later at its address starts afresh.
void forgetJoinedStream(Capture* capture, halStream_t* stream) {
    capture->lanes.erase(stream);
    for (auto& lane : capture->lanes) lane.second.erase(stream);
    for (auto& event : capture->events) event.second.erase(stream);
}

halError refuse(Capture* capture, const char* operation, const char* why, const void* what,
                const char* reason = "the call cannot be captured") {
    capture->invalidated = true;
    return fail(HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                "{}: {} {} is being captured (halStreamBeginCapture); {}, and the capture is "
                "invalidated",
                operation, why, what, reason);
}

}  // namespace

namespace detail {

halError checkPermittedDuringCaptureSlow(const char* function) {
    std::lock_guard<std::mutex> lock(g_mutex);
    const Capture* forbidding = nullptr;
    for (Capture* capture : g_captures) {
        const bool forbids = capture->mode == HAL_CAPTURE_MODE_GLOBAL ||
                             (capture->mode == HAL_CAPTURE_MODE_THREAD_LOCAL &&
                              capture->thread == std::this_thread::get_id());
        if (!forbids) continue;
        capture->invalidated = true;
        forbidding = capture;
    }
    if (forbidding == nullptr) return HAL_SUCCESS;
    return fail(HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                "{}: may wait for the device, which a {} capture under way (stream {}) forbids "
                "(halCaptureMode); the capture is invalidated",
                function, modeName(forbidding->mode), static_cast<const void*>(forbidding->origin));
}

}  // namespace detail

halError beginCapture(halStream_t* stream, halCaptureMode mode, const char* operation) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (captureOf(stream) != nullptr) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: stream {} is already being captured", operation,
                    static_cast<const void*>(stream));
    }
    auto capture = std::make_unique<Capture>();
    capture->device = stream->device;
    capture->origin = stream;
    capture->mode = mode;
    capture->thread = std::this_thread::get_id();
    capture->lanes[stream];
    g_captures.push_back(capture.get());
    detail::activeCaptures.fetch_add(1, std::memory_order_relaxed);
    call_gate::hold();
    stream->capture.capture.store(capture.release());
    return HAL_SUCCESS;
}

halError endCapture(halStream_t* stream, halGraph* graph, const char* operation) {
    CommandList commands;
    std::vector<void*> memory;
    halError ended = HAL_SUCCESS;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        Capture* capture = captureOf(stream);
        if (capture == nullptr || capture->origin != stream) {
            return fail(HAL_ERROR_STREAM_CAPTURE_UNMATCHED,
                        capture == nullptr
                            ? "{}: stream {} is not being captured"
                            : "{}: stream {} joined a capture but did not begin it; end it on the "
                              "stream that began it",
                        operation, static_cast<const void*>(stream));
        }
        if (capture->mode != HAL_CAPTURE_MODE_RELAXED &&
            capture->thread != std::this_thread::get_id()) {
            return fail(HAL_ERROR_STREAM_CAPTURE_WRONG_THREAD,
                        "{}: the {} capture of stream {} was begun on another thread; end it "
                        "there (or begin it with HAL_CAPTURE_MODE_RELAXED)",
                        operation, modeName(capture->mode), static_cast<const void*>(stream));
        }
        if (capture->invalidated) {
            ended = refuseInvalidated(capture, operation);
        } else if (const halStream_t* unjoined = unjoinedStream(*capture)) {
            ended = fail(HAL_ERROR_STREAM_CAPTURE_UNJOINED,
                         "{}: stream {} joined the capture of stream {} but was not joined back: "
                         "record an event on it after its last captured work and make stream {} "
                         "wait on it; the capture is ended",
                         operation, static_cast<const void*>(unjoined),
                         static_cast<const void*>(stream), static_cast<const void*>(stream));
        }
        memory = finish(capture, &commands);
    }
    if (ended != HAL_SUCCESS) {
        release(stream, memory);
        return ended;
    }
    Device* device = stream->device;
    auto body = std::make_shared<GraphBody>(device, std::move(commands), std::move(memory));
    // A kernel's module unloaded meanwhile (by another thread, in relaxed mode): the graph never
    // launches, so the plugin is not handed a function that is gone.
    if (body->kernelsLive()) body->buildNative();
    halPluginEvent finished = nullptr;
    if (halError e = checked(
            device->vtable->eventCreate(device->native, HAL_EVENT_DISABLE_TIMING, &finished),
            device, operation)) {
        return e;
    }
    halGraph_t* object = runtime().graphs.create();
    if (object == nullptr) {
        device->vtable->eventDestroy(finished);
        return fail(HAL_ERROR_OUT_OF_MEMORY, "{}: too many live graphs", operation);
    }
    object->device = device;
    object->body = std::move(body);
    object->finished = finished;
    *graph = object;
    return HAL_SUCCESS;
}

halCaptureStatus captureStatus(const halStream_t* stream) {
    if (!capturing(stream)) return HAL_CAPTURE_STATUS_NONE;
    std::lock_guard<std::mutex> lock(g_mutex);
    const Capture* capture = captureOf(stream);
    if (capture == nullptr) return HAL_CAPTURE_STATUS_NONE;
    return capture->invalidated ? HAL_CAPTURE_STATUS_INVALIDATED : HAL_CAPTURE_STATUS_ACTIVE;
}

halError captureCommand(halStream_t* stream, Command command, const char* operation) {
    std::lock_guard<std::mutex> lock(g_mutex);
    halError refused = HAL_SUCCESS;
    Capture* capture = liveCapture(stream, operation, &refused);
    if (capture == nullptr) return refused;
    capture->commands.append(std::move(command));
    advance(capture, stream);
    return HAL_SUCCESS;
}

halError refuseInCapture(halStream_t* stream, const char* operation, const char* reason) {
    std::lock_guard<std::mutex> lock(g_mutex);
    Capture* capture = captureOf(stream);
    if (capture == nullptr) {
        return fail(HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED, "{}: stream {} was being captured; {}",
                    operation, static_cast<const void*>(stream), reason);
    }
    return refuse(capture, operation, "stream", stream, reason);
}

halError refuseCapturedEvent(halEvent_t* event, const char* operation) {
    std::lock_guard<std::mutex> lock(g_mutex);
    Capture* capture = event->capture.capture.load(std::memory_order_relaxed);
    if (capture == nullptr) {
        return fail(HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED, "{}: event {} was recorded in a capture",
                    operation, static_cast<const void*>(event));
    }
    return refuse(capture, operation, "the event was recorded in a capture, and its stream",
                  capture->origin);
}

halError refuseIfDeviceCaptured(Device* device, const char* operation) {
    if (detail::activeCaptures.load(std::memory_order_relaxed) == 0) return HAL_SUCCESS;
    std::lock_guard<std::mutex> lock(g_mutex);
    Capture* found = nullptr;
    for (Capture* capture : g_captures) {
        if (capture->device != device) continue;
        capture->invalidated = true;
        found = capture;
    }
    if (found == nullptr) return HAL_SUCCESS;
    return refuse(found, operation, "a stream of the device,", found->origin);
}

halError captureRecordEvent(halEvent_t* event, halStream_t* stream, const char* operation) {
    std::lock_guard<std::mutex> lock(g_mutex);
    halError refused = HAL_SUCCESS;
    Capture* capture = liveCapture(stream, operation, &refused);
    if (capture == nullptr) return refused;
    Capture* previous = event->capture.capture.load(std::memory_order_relaxed);
    if (previous != nullptr && previous != capture) previous->events.erase(event);
    advance(capture, stream);
    capture->events[event] = capture->lanes[stream];
    event->capture.capture.store(capture);
    return HAL_SUCCESS;
}

halError captureWaitEvent(halStream_t* stream, halEvent_t* event, const char* operation) {
    std::lock_guard<std::mutex> lock(g_mutex);
    Capture* waiting = captureOf(stream);
    Capture* recorded = event->capture.capture.load(std::memory_order_relaxed);
    if (recorded == nullptr) {
        if (waiting == nullptr) {
            return fail(HAL_ERROR_STREAM_CAPTURE_INVALIDATED,
                        "{}: the capture of event {} ended while this call was made", operation,
                        static_cast<const void*>(event));
        }
        if (waiting->invalidated) return refuseInvalidated(waiting, operation);
        // A never-recorded event imposes no wait, in a capture as outside.
        if (!event->recorded.load(std::memory_order_acquire)) return HAL_SUCCESS;
        waiting->invalidated = true;
        return fail(HAL_ERROR_STREAM_CAPTURE_ISOLATION,
                    "{}: event {} was recorded outside the capture of stream {}, which cannot "
                    "wait for outside work (wait for it before halStreamBeginCapture); the "
                    "capture is invalidated",
                    operation, static_cast<const void*>(event),
                    static_cast<const void*>(waiting->origin));
    }
    if (waiting != nullptr && waiting != recorded) {
        waiting->invalidated = true;
        recorded->invalidated = true;
        return fail(HAL_ERROR_STREAM_CAPTURE_ISOLATION,
                    "{}: event {} was recorded in the capture of stream {}, and stream {} is in "
                    "the capture of stream {}; captures cannot depend on each other, both are "
                    "invalidated",
                    operation, static_cast<const void*>(event),
                    static_cast<const void*>(recorded->origin), static_cast<const void*>(stream),
                    static_cast<const void*>(waiting->origin));
    }
    if (recorded->invalidated) return refuseInvalidated(recorded, operation);
    if (waiting == nullptr) {
        if (stream == stream->device->defaultStream.load(std::memory_order_acquire)) {
            return refuse(recorded, operation,
                          "the default stream cannot join a capture; the event's stream",
                          recorded->origin);
        }
        if (stream->device != recorded->device) {
            return refuse(recorded, operation,
                          "a stream of another device cannot join a capture; the event's stream",
                          recorded->origin);
        }
        stream->capture.capture.store(recorded);  // the fork: the stream joins the capture
    }
    CaptureClock& clock = recorded->lanes[stream];
    for (const auto& point : recorded->events.at(event)) {
        uint64_t& seen = clock[point.first];
        seen = std::max(seen, point.second);
    }
    advance(recorded, stream);
    return HAL_SUCCESS;
}

namespace {

// A block freed earlier in `capture` that `stream` may take for `size` bytes: one whose free
// `stream` follows (its own earlier free, or another stream's before a join), the smallest that
// fits. Its uses before the free are then over whenever the new ones run, in every launch, as
// a graph's launch runs its commands in an order that keeps the capture's. The block is the
// graph's already, so the pool is not asked; nullptr where none serves.
void* reuseFreedBlock(Capture* capture, halStream_t* stream, size_t size) {
    const CaptureClock& reached = capture->lanes[stream];
    auto best = capture->freed.end();
    for (auto it = capture->freed.begin(); it != capture->freed.end(); ++it) {
        const auto seen = reached.find(it->stream);
        const bool follows = seen != reached.end() && seen->second >= it->point;
        if (follows && it->bytes >= size &&
            (best == capture->freed.end() || it->bytes < best->bytes)) {
            best = it;
        }
    }
    if (best == capture->freed.end()) return nullptr;
    void* block = best->block;
    capture->freed.erase(best);
    return block;
}

}  // namespace

halError captureMallocAsync(halStream_t* stream, size_t size, void** ptr, const char* operation) {
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        halError refused = HAL_SUCCESS;
        Capture* capture = liveCapture(stream, operation, &refused);
        if (capture == nullptr) return refused;
        if (void* block = reuseFreedBlock(capture, stream, size)) {
            advance(capture, stream);
            *ptr = block;
            return HAL_SUCCESS;
        }
    }
    void* block = nullptr;
    if (halError e = allocateBlock(stream, size, operation, &block)) return e;
    // Launches may run on any stream: as halMalloc, the block must not be in use by work
    // queued before the capture began.
    if (halError e = synchronizeStream(stream, operation)) {
        freeBlock(stream, block, operation);
        return e;
    }
    halError refused = HAL_SUCCESS;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (Capture* capture = liveCapture(stream, operation, &refused)) {
            capture->ownedMemory.push_back(block);
            capture->ownedBytes[block] = size;
            g_graphOwned.insert(block);
            detail::graphOwnedBlocks.fetch_add(1, std::memory_order_relaxed);
            advance(capture, stream);
            *ptr = block;
        }
    }
    if (refused == HAL_SUCCESS) return HAL_SUCCESS;
    // The pool is never called with g_mutex held.
    freeBlock(stream, block, operation);
    return refused;
}

halError captureFreeAsync(halStream_t* stream, void* ptr, const char* operation) {
    std::lock_guard<std::mutex> lock(g_mutex);
    halError refused = HAL_SUCCESS;
    Capture* capture = liveCapture(stream, operation, &refused);
    if (capture == nullptr) return refused;
    const auto& owned = capture->ownedMemory;
    if (std::find(owned.begin(), owned.end(), ptr) == owned.end()) {
        capture->invalidated = true;
        return fail(HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                    "{}: {} was not allocated in the capture of stream {}; a capture frees only "
                    "the memory it allocated (halMallocAsync on a capturing stream); the capture "
                    "is invalidated",
                    operation, ptr, static_cast<const void*>(capture->origin));
    }
    const auto& freed = capture->freed;
    if (std::any_of(freed.begin(), freed.end(),
                    [&](const Capture::FreedBlock& block) { return block.block == ptr; })) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: {} was freed in this capture already", operation,
                    ptr);
    }
    advance(capture, stream);
    capture->freed.push_back(
        {ptr, capture->ownedBytes.at(ptr), stream, capture->lanes[stream][stream]});
    return HAL_SUCCESS;
}

halError refuseGraphOwnedSlow(const void* ptr, const char* operation) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_graphOwned.count(ptr) == 0) return HAL_SUCCESS;
    return fail(HAL_ERROR_INVALID_VALUE,
                "{}: {} is graph-owned memory (halMallocAsync in a capture); it is freed with "
                "halFreeAsync inside its capture, and returns to the pool with halGraphDestroy",
                operation, ptr);
}

void forgetGraphOwned(const std::vector<void*>& blocks) {
    if (blocks.empty()) return;
    std::lock_guard<std::mutex> lock(g_mutex);
    for (void* block : blocks) g_graphOwned.erase(block);
    detail::graphOwnedBlocks.fetch_sub(static_cast<int>(blocks.size()), std::memory_order_relaxed);
}

halError leaveCapture(halStream_t* stream, const char* operation) {
    CommandList commands;
    std::vector<void*> memory;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        Capture* capture = captureOf(stream);
        if (capture == nullptr) return HAL_SUCCESS;
        if (capture->origin != stream) {
            if (!joinedBack(*capture, stream)) {
                return fail(HAL_ERROR_STREAM_CAPTURE_UNJOINED,
                            "{}: stream {} has work in the capture of stream {} that was not "
                            "joined back; record an event on it after its last captured work and "
                            "make stream {} wait on it, then destroy it (the stream and the "
                            "capture are left as they were)",
                            operation, static_cast<const void*>(stream),
                            static_cast<const void*>(capture->origin),
                            static_cast<const void*>(capture->origin));
            }
            forgetJoinedStream(capture, stream);
            stream->capture.capture.store(nullptr);
            return HAL_SUCCESS;
        }
        memory = finish(capture, &commands);
    }
    release(stream, memory);
    return HAL_SUCCESS;
}

void leaveCapture(halEvent_t* event) {
    std::lock_guard<std::mutex> lock(g_mutex);
    Capture* capture = event->capture.capture.load(std::memory_order_relaxed);
    if (capture == nullptr) return;
    capture->events.erase(event);
    event->capture.capture.store(nullptr);
}

}  // namespace polyhal
