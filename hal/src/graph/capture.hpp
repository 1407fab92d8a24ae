// Stream capture: work submitted to a capturing stream is recorded into a graph instead of
// running. The public functions ask here whether a stream or event is in a capture (one atomic
// load while none is) and hand captured work over; the rules (fork and join, capture modes,
// invalidation) live in capture.cpp.
#ifndef POLYHAL_HAL_SRC_GRAPH_CAPTURE_HPP_
#define POLYHAL_HAL_SRC_GRAPH_CAPTURE_HPP_

#include <atomic>
#include <memory>

#include "api.hpp"
#include "capture_mode.hpp"
#include "graph.hpp"

namespace polyhal {

namespace detail {
// How many graph-owned blocks live in the process.
extern std::atomic<int> graphOwnedBlocks;
}  // namespace detail

inline bool capturing(const halStream_t* stream) {
    return stream->capture.capture.load(std::memory_order_acquire) != nullptr;
}

// Was `event` last recorded inside a capture still under way?
inline bool capturedEvent(const halEvent_t* event) {
    return event->capture.capture.load(std::memory_order_acquire) != nullptr;
}

halError beginCapture(halStream_t* stream, halCaptureMode mode, const char* operation);
halError endCapture(halStream_t* stream, halGraph* graph, const char* operation);
halCaptureStatus captureStatus(const halStream_t* stream);

// Records `command` into the capture of `stream` (capturing(stream) was true); the runner
// (command_runner.hpp) calls it.
halError captureCommand(halStream_t* stream, Command command, const char* operation);

// Refuses `operation` on the capturing `stream`, invalidating its capture; `reason` says why,
// in the message.
halError refuseInCapture(halStream_t* stream, const char* operation,
                         const char* reason = "the call cannot be captured");
// Refuses `operation` on `event`, recorded in a capture under way, invalidating that capture.
halError refuseCapturedEvent(halEvent_t* event, const char* operation);
// Refuses `operation` where a stream of `device` is captured, invalidating those captures.
halError refuseIfDeviceCaptured(Device* device, const char* operation);

// halRecordEvent on a capturing stream: a point of the capture, for forks and joins.
halError captureRecordEvent(halEvent_t* event, halStream_t* stream, const char* operation);
// halStreamWaitEvent where the stream is capturing or the event was recorded in a capture.
halError captureWaitEvent(halStream_t* stream, halEvent_t* event, const char* operation);

// halMallocAsync and halFreeAsync on a capturing stream: graph-owned memory.
halError captureMallocAsync(halStream_t* stream, size_t size, void** ptr, const char* operation);
halError captureFreeAsync(halStream_t* stream, void* ptr, const char* operation);

// Refuses to free `ptr` outside its capture when it is graph-owned memory.
halError refuseGraphOwnedSlow(const void* ptr, const char* operation);
inline halError refuseGraphOwned(const void* ptr, const char* operation) {
    if (__builtin_expect(detail::graphOwnedBlocks.load(std::memory_order_relaxed) == 0, 1)) {
        return HAL_SUCCESS;
    }
    return refuseGraphOwnedSlow(ptr, operation);
}
// The graph has released its blocks to the pool.
void forgetGraphOwned(const std::vector<void*>& blocks);

// A stream being destroyed leaves its capture: the origin stream ends it; a forked stream whose
// captured work was joined back leaves the capture intact, and one whose work was not is refused
// (HAL_ERROR_STREAM_CAPTURE_UNJOINED, naming both streams), the stream and the capture unchanged.
// An event destroyed, or recorded again outside its capture, leaves it.
halError leaveCapture(halStream_t* stream, const char* operation);
void leaveCapture(halEvent_t* event);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_GRAPH_CAPTURE_HPP_
