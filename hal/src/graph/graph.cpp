// Implements graph.hpp: a graph's body, its replay and its launches.
#include "graph.hpp"

#include <mutex>
#include <utility>

#include "capture.hpp"
#include "log.hpp"
#include "native_graph.hpp"
#include "stream_ops.hpp"

namespace polyhal {

GraphBody::GraphBody(Device* device, CommandList commands, std::vector<void*> ownedMemory)
    : device_(device), commands_(std::move(commands)), ownedMemory_(std::move(ownedMemory)) {
    for (const Command& command : commands_.commands()) addFootprint(command, &footprint_);
}

GraphBody::~GraphBody() {
    // Launches still pending run to their end: the plugin frees the executable after them.
    if (native_ != nullptr) {
        if (halError e = device_->vtable->graphDestroy(native_)) {
            logger().warn(
                "halGraphDestroy: {}",
                takePluginErrorMessage(e, device_->backend->name.c_str(), "graphDestroy"));
        }
    }
    forgetGraphOwned(ownedMemory_);
    // In the default stream's order: the pool hands a block out again only once the launches'
    // uses, recorded on their streams, are over.
    halStream_t* stream = nullptr;
    if (defaultStream(device_, &stream) != HAL_SUCCESS) return;  // kept: safer than reused early
    for (void* block : ownedMemory_) freeBlock(stream, block, "halGraphDestroy");
}

const KernelRef* GraphBody::firstGoneKernel() const {
    for (const KernelRef& kernel : footprint_.kernels) {
        const halFunction_t* live = runtime().functions.validate(kernel.function);
        if (live == nullptr || live->serial != kernel.serial) return &kernel;
    }
    return nullptr;
}

halError GraphBody::checkLive(const char* operation) const {
    if (const KernelRef* gone = firstGoneKernel()) {
        return fail(HAL_ERROR_INVALID_HANDLE,
                    "{}: the graph launches kernel function {}, whose module was unloaded",
                    operation, static_cast<const void*>(gone->function));
    }
    return HAL_SUCCESS;
}

void GraphBody::buildNative() {
    NativeGraphDescription description;
    describe(&description);
    native_ = description.build(device_);
}

void GraphBody::describe(NativeGraphDescription* description) const {
    for (const Command& command : commands_.commands()) describeCommand(command, description);
}

halError GraphBody::enqueue(halStream_t* stream) const {
    if (native_ != nullptr) return device_->vtable->graphLaunch(native_, stream->native);
    return replay(stream);
}

halError GraphBody::replay(halStream_t* stream) const {
    for (const Command& command : commands_.commands()) {
        if (halError e = enqueueCommand(command, stream)) return e;
    }
    return HAL_SUCCESS;
}

halError launchGraph(halGraph_t* graph, halStream_t* stream, const char* operation) {
    Device* device = stream->device;
    const GraphBody& body = *graph->body;
    const Footprint& footprint = body.footprint();
    if (halError e = body.checkLive(operation)) return e;
    std::lock_guard<std::mutex> lock(graph->launchMutex);
    return enqueueOnStream(
        stream, operation,
        [&] {
            if (graph->launched) {
                if (halError e = device->vtable->streamWaitEvent(stream->native, graph->finished)) {
                    return e;
                }
                // The pool and the race detector learn the wait: the launch follows the previous
                // one, on whichever stream that ran.
                device->pool->streamWaited(stream->poolStream, graph->finishedClock);
            }
            check::beforeSubmit(stream);
            const halError status = body.enqueue(stream);
            // A launch refused part way still runs the commands enqueued before the refusal: the
            // pool must know of them, and the next launch must follow them as well.
            const uint64_t ticket =
                noteSubmitted(stream, footprint.accesses.data(), footprint.accesses.size());
            check::submitted(stream, operation, footprint.accesses.data(),
                             footprint.accesses.size(), ticket);
            // What `finished` follows, taken before its record (as recordEvent does): work
            // another thread enqueues on the stream after the record is not claimed.
            static thread_local allocator::VectorClock captured;
            device->pool->captureInto(stream->poolStream, &captured);
            const halError recorded = device->vtable->eventRecord(graph->finished, stream->native);
            if (recorded == HAL_SUCCESS) {
                graph->launched = true;
                std::swap(graph->finishedClock, captured);
            }
            return status != HAL_SUCCESS ? status : recorded;
        },
        [] {});
}

halError destroyGraph(halGraph_t* graph, const char* operation) {
    Device* device = graph->device;
    const halPluginEvent finished = graph->finished;
    runtime().graphs.destroy(graph);  // the body goes with the last owner
    return checked(device->vtable->eventDestroy(finished), device, operation);
}

}  // namespace polyhal
