// The commands a stream's worker runs: fixed-size records (a variant), so queueing one copies a
// few hundred bytes at most and allocates nothing.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_COMMAND_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_COMMAND_HPP_

#include <polyhal/hal.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <variant>

#include "engine/kernel_arguments.hpp"
#include "engine/timeline.hpp"

namespace polyhal {
class SharedEventState;
}  // namespace polyhal

namespace polyhal::cpu {

class Event;
class GraphBatch;
struct Function;

struct HostCall {
    halHostFn fn;
    void* userData;
};

struct CopyBytes {
    void* dst;
    const void* src;
    size_t count;
};

// `depth` slices of `height` rows of `width` bytes, at pitches given per end.
struct CopyBox {
    unsigned char* dst;
    const unsigned char* src;
    size_t dstPitch, dstSlicePitch;
    size_t srcPitch, srcSlicePitch;
    size_t width, height, depth;
};

inline CopyBox makeCopyBox(const halMemcpy3DParams& params) {
    return CopyBox{static_cast<unsigned char*>(params.dst),
                   static_cast<const unsigned char*>(params.src),
                   params.dstPitch,
                   params.dstSlicePitch,
                   params.srcPitch,
                   params.srcSlicePitch,
                   params.width,
                   params.height,
                   params.depth};
}

struct FillBytes {
    void* dst;
    size_t count;
    unsigned char value;
};

struct KernelLaunch {
    const Function* function;  // owned by its module, which outlives the launch
    halDim3 grid;
    halDim3 block;
    size_t sharedBytes;
    KernelArguments args;
};

// Stamps the event's timestamp if `generation` is still its latest record.
struct EventMarker {
    std::shared_ptr<Event> event;
    uint64_t generation;
};

// Blocks the worker until another stream's timeline reaches the point.
struct TimelineWait {
    TimelinePoint until;
};

// Publishes the completion of record `generation` of an event shared between processes.
struct SharedEventSignal {
    std::shared_ptr<SharedEventState> state;
    uint32_t generation;
};

// Blocks the worker until record `generation` of a shared event has completed, in whichever
// process it was made.
struct SharedEventWait {
    std::shared_ptr<SharedEventState> state;
    uint32_t generation;
};

// Runs every operation of a native graph, in order (engine/graph_batch.hpp).
struct GraphRun {
    std::shared_ptr<GraphBatch> batch;
};

using Command =
    std::variant<std::monostate, HostCall, CopyBytes, CopyBox, FillBytes, KernelLaunch, EventMarker,
                 TimelineWait, SharedEventSignal, SharedEventWait, GraphRun>;

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_COMMAND_HPP_
