// The core's objects behind the public handles. Each knows its device, and through it the
// backend's dispatch table, so a call dispatches with no lookup.
#ifndef POLYHAL_HAL_SRC_OBJECTS_HPP_
#define POLYHAL_HAL_SRC_OBJECTS_HPP_

#include <polyhal/plugin.h>
#include <polyhal/allocator/event_clock.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backend.hpp"

namespace polyhal {

struct Device;
struct Capture;
class GraphBody;

// The capture a stream or an event takes part in (capture.hpp), or nullptr. Copying it (a
// handle object built from a temporary) starts outside any capture.
struct CaptureLink {
    CaptureLink() = default;
    CaptureLink(const CaptureLink&) noexcept {}
    std::atomic<Capture*> capture{nullptr};
};

}  // namespace polyhal

struct halStream_t {
    polyhal::Device* device;
    halPluginStream native;
    int priority;
    polyhal::allocator::Stream* poolStream;  // the pool's clock for this stream
    polyhal::CaptureLink capture{};
    uint32_t flags = HAL_STREAM_DEFAULT;
    // The legacy default stream's bookkeeping (legacy_stream.hpp), under the device's
    // LegacyStreams lock: work given since the default stream last waited for this stream, and
    // the default stream's operation count this stream last waited for.
    bool legacyPending = false;
    uint64_t legacySeen = 0;
};

struct halEvent_t {
    polyhal::Device* device;
    halPluginEvent native;
    uint32_t flags;
    std::atomic<bool> recorded{false};
    polyhal::allocator::EventClock clock;  // what the latest record captured
    polyhal::CaptureLink capture;          // the capture its latest record belongs to
};

struct halGraph_t {
    polyhal::Device* device;
    std::shared_ptr<const polyhal::GraphBody> body;
    // Launches of one graph run one after another: each waits for `finished`, recorded by the
    // previous one.
    std::mutex launchMutex;
    halPluginEvent finished = nullptr;
    // What the latest launch's `finished` record follows, in the pool's terms.
    polyhal::allocator::VectorClock finishedClock;
    bool launched = false;
};

struct halFunction_t {
    polyhal::Device* device;
    halModule_t* module;
    halPluginFunction native;
    const char* name = nullptr;  // its key in module->functions, which lives as long as it does
    // Unique among every function ever created: a handle slot reused by a later function holds
    // another serial, so a graph can tell its kernel is gone even then.
    uint64_t serial = 0;
};

struct halModule_t {
    polyhal::Device* device;
    halPluginModule native;
    std::mutex mutex;
    // One handle per kernel name, so repeated lookups return the same halFunction.
    std::map<std::string, halFunction_t*> functions;
};

#endif  // POLYHAL_HAL_SRC_OBJECTS_HPP_
