// Implements graph.hpp: captured operations and their replay.
#include "graph.hpp"

#include <array>
#include <cstring>
#include <utility>

#include "capture.hpp"
#include "copy_plan.hpp"
#include "log.hpp"
#include "native_graph.hpp"
#include "stream_ops.hpp"

namespace polyhal {
namespace {

class MemsetOp final : public GraphOp {
  public:
    MemsetOp(void* dst, unsigned char value, size_t count)
        : dst_(dst), value_(value), count_(count) {}
    halError enqueue(halStream_t* stream) const override {
        return stream->device->vtable->memsetAsync(stream->native, dst_, value_, count_);
    }
    void addFootprint(GraphFootprint* footprint) const override {
        footprint->accesses.push_back({dst_, count_, check::AccessMode::kWrite});
    }
    void describe(NativeGraphDescription* description) const override {
        description->addMemset(dst_, value_, count_);
    }

  private:
    void* dst_;
    unsigned char value_;
    size_t count_;
};

class CopyOp final : public GraphOp {
  public:
    CopyOp(void* dst, const void* src, size_t count, halMemcpyKind kind)
        : dst_(dst), src_(src), count_(count), kind_(kind) {}
    halError enqueue(halStream_t* stream) const override {
        return stream->device->vtable->memcpyAsync(stream->native, dst_, src_, count_, kind_);
    }
    void addFootprint(GraphFootprint* footprint) const override {
        const std::array<check::Access, 2> accesses = check::copyAccesses(dst_, src_, count_);
        footprint->accesses.insert(footprint->accesses.end(), accesses.begin(), accesses.end());
    }
    void describe(NativeGraphDescription* description) const override {
        description->addCopy(dst_, src_, count_, kind_);
    }

  private:
    void* dst_;
    const void* src_;
    size_t count_;
    halMemcpyKind kind_;
};

class BoxOp final : public GraphOp {
  public:
    explicit BoxOp(const halMemcpy3DParams& box) : box_(box) {}
    halError enqueue(halStream_t* stream) const override {
        return stream->device->vtable->memcpy3DAsync(stream->native, &box_);
    }
    void addFootprint(GraphFootprint* footprint) const override {
        const std::array<check::Access, 2> accesses = boxAccesses(box_);
        footprint->accesses.insert(footprint->accesses.end(), accesses.begin(), accesses.end());
    }
    void describe(NativeGraphDescription* description) const override { description->addBox(box_); }

  private:
    halMemcpy3DParams box_;
};

class KernelOp final : public GraphOp {
  public:
    KernelOp(const halFunction_t* function, halDim3 grid, halDim3 block, size_t sharedBytes,
             const halKernelArg* args, check::ArgUses uses, uint32_t numArgs)
        : function_(function),
          serial_(function->serial),
          grid_(grid),
          block_(block),
          sharedBytes_(sharedBytes) {
        // Kept as halLaunchKernelWithUses's form, whichever call declared them.
        if (uses.access != nullptr || uses.uses != nullptr) {
            uses_.resize(numArgs);
            for (uint32_t i = 0; i < numArgs; ++i) {
                uses_[i] = halKernelArgUse{static_cast<halKernelArgAccess>(uses.mode(i)),
                                           uses.uses != nullptr ? uses.uses[i].bytes : 0};
            }
        }
        // The values, copied now: the caller's argument storage may be gone by the launch.
        size_t total = 0;
        for (uint32_t i = 0; i < numArgs; ++i) total += args[i].size;
        values_.resize(total);
        args_.resize(numArgs);
        size_t offset = 0;
        for (uint32_t i = 0; i < numArgs; ++i) {
            std::memcpy(values_.data() + offset, args[i].value, args[i].size);
            args_[i] = halKernelArg{values_.data() + offset, args[i].size};
            offset += args[i].size;
        }
    }
    halError enqueue(halStream_t* stream) const override {
        return stream->device->vtable->launchKernel(stream->native, function_->native, grid_,
                                                    block_, sharedBytes_, args_.data(),
                                                    static_cast<uint32_t>(args_.size()));
    }
    void addFootprint(GraphFootprint* footprint) const override {
        // As an eager launch.
        footprint->kernels.push_back({function_, serial_});
        const size_t first = footprint->accesses.size();
        footprint->accesses.resize(first + args_.size());
        const check::ArgUses uses{nullptr, uses_.empty() ? nullptr : uses_.data()};
        const size_t count =
            check::kernelAccesses(args_.data(), uses, static_cast<uint32_t>(args_.size()),
                                  footprint->accesses.data() + first);
        footprint->accesses.resize(first + count);
    }
    void describe(NativeGraphDescription* description) const override {
        description->addKernel(function_->native, grid_, block_, sharedBytes_, args_.data(),
                               static_cast<uint32_t>(args_.size()));
    }

  private:
    const halFunction_t* function_;
    uint64_t serial_;
    halDim3 grid_, block_;
    size_t sharedBytes_;
    std::vector<unsigned char> values_;
    std::vector<halKernelArg> args_;
    std::vector<halKernelArgUse> uses_;  // empty: every argument read and written, to its end
};

class HostFunctionOp final : public GraphOp {
  public:
    HostFunctionOp(halHostFn fn, void* userData) : fn_(fn), userData_(userData) {}
    halError enqueue(halStream_t* stream) const override {
        // Replayed work is not checked for races: the function orders nothing for the checker.
        return launchMarkedHostFunction(*stream->device->vtable, stream->native, fn_, userData_,
                                        allocator::VectorClock());
    }
    void describe(NativeGraphDescription* description) const override {
        description->addHostFunction(fn_, userData_);
    }

  private:
    halHostFn fn_;
    void* userData_;
};

// A launch of another graph, captured: its operations in place, its body kept alive.
class ChildGraphOp final : public GraphOp {
  public:
    explicit ChildGraphOp(std::shared_ptr<const GraphBody> body) : body_(std::move(body)) {}
    // Replayed, never the child's own executable: that one runs only through launches of the
    // child graph, which the core orders one after another.
    halError enqueue(halStream_t* stream) const override { return body_->replay(stream); }
    void describe(NativeGraphDescription* description) const override {
        body_->describe(description);
    }
    void addFootprint(GraphFootprint* footprint) const override {
        const GraphFootprint& child = body_->footprint();
        footprint->kernels.insert(footprint->kernels.end(), child.kernels.begin(),
                                  child.kernels.end());
        footprint->accesses.insert(footprint->accesses.end(), child.accesses.begin(),
                                   child.accesses.end());
    }

  private:
    std::shared_ptr<const GraphBody> body_;
};

}  // namespace

GraphBody::GraphBody(Device* device, std::vector<std::unique_ptr<GraphOp>> ops,
                     std::vector<void*> ownedMemory)
    : device_(device), ops_(std::move(ops)), ownedMemory_(std::move(ownedMemory)) {
    for (const auto& op : ops_) op->addFootprint(&footprint_);
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
    for (void* block : ownedMemory_) {
        check::freed(device_, block, "halGraphDestroy");
        device_->pool->free(block, stream->poolStream);
    }
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
    for (const auto& op : ops_) op->describe(description);
}

halError GraphBody::enqueue(halStream_t* stream) const {
    if (native_ != nullptr) return device_->vtable->graphLaunch(native_, stream->native);
    return replay(stream);
}

halError GraphBody::replay(halStream_t* stream) const {
    for (const auto& op : ops_) {
        if (halError e = op->enqueue(stream)) return e;
    }
    return HAL_SUCCESS;
}

std::unique_ptr<GraphOp> makeMemsetOp(void* dst, unsigned char value, size_t count) {
    return std::make_unique<MemsetOp>(dst, value, count);
}

std::unique_ptr<GraphOp> makeCopyOp(void* dst, const void* src, size_t count, halMemcpyKind kind) {
    return std::make_unique<CopyOp>(dst, src, count, kind);
}

std::unique_ptr<GraphOp> makeBoxOp(const halMemcpy3DParams& box) {
    return std::make_unique<BoxOp>(box);
}

std::unique_ptr<GraphOp> makeKernelOp(const halFunction_t* function, halDim3 grid, halDim3 block,
                                      size_t sharedBytes, const halKernelArg* args,
                                      check::ArgUses uses, uint32_t numArgs) {
    return std::make_unique<KernelOp>(function, grid, block, sharedBytes, args, uses, numArgs);
}

std::unique_ptr<GraphOp> makeHostFunctionOp(halHostFn fn, void* userData) {
    return std::make_unique<HostFunctionOp>(fn, userData);
}

std::unique_ptr<GraphOp> makeGraphOp(std::shared_ptr<const GraphBody> body) {
    return std::make_unique<ChildGraphOp>(std::move(body));
}

halError launchGraph(halGraph_t* graph, halStream_t* stream, const char* operation) {
    Device* device = stream->device;
    const GraphBody& body = *graph->body;
    const GraphFootprint& footprint = body.footprint();
    if (halError e = body.checkLive(operation)) return e;
    if (halError e = legacyBeforeSubmit(stream, operation)) return e;
    std::lock_guard<std::mutex> lock(graph->launchMutex);
    trace::Timing* timing = trace::beforeSubmit(stream);
    if (graph->launched) {
        if (halError e = device->vtable->streamWaitEvent(stream->native, graph->finished)) {
            trace::abandon(timing);
            return checked(e, device, operation);
        }
        // The pool and the race detector learn the wait: the launch follows the previous one,
        // on whichever stream that ran.
        device->pool->streamWaited(stream->poolStream, graph->finishedClock);
    }
    check::beforeSubmit(stream);
    halError status = body.enqueue(stream);
    // A launch refused part way still runs the operations enqueued before the refusal: the pool
    // must know of them, and the next launch must follow them as well.
    const uint64_t ticket =
        noteSubmitted(stream, footprint.accesses.data(), footprint.accesses.size());
    check::submitted(stream, operation, footprint.accesses.data(), footprint.accesses.size(),
                     ticket);
    // What `finished` follows, taken before its record (as recordEvent does): work another
    // thread enqueues on the stream after the record is not claimed.
    static thread_local allocator::VectorClock captured;
    device->pool->captureInto(stream->poolStream, &captured);
    const halError recorded = device->vtable->eventRecord(graph->finished, stream->native);
    if (recorded == HAL_SUCCESS) {
        graph->launched = true;
        std::swap(graph->finishedClock, captured);
    }
    if (status == HAL_SUCCESS) status = recorded;
    if (status != HAL_SUCCESS) {
        trace::abandon(timing);
        return checked(status, device, operation);
    }
    trace::submitted(stream, operation, timing);
    return HAL_SUCCESS;
}

halError destroyGraph(halGraph_t* graph, const char* operation) {
    Device* device = graph->device;
    const halPluginEvent finished = graph->finished;
    runtime().graphs.destroy(graph);  // the body goes with the last owner
    return checked(device->vtable->eventDestroy(finished), device, operation);
}

}  // namespace polyhal
