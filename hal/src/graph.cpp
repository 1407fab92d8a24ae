// Implements graph.hpp: captured operations and their replay.
#include "graph.hpp"

#include <cstring>

#include "capture.hpp"
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
    void addDependencies(std::vector<const void*>* uses,
                         std::vector<KernelRef>*) const override {
        uses->push_back(dst_);
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
    void addDependencies(std::vector<const void*>* uses,
                         std::vector<KernelRef>*) const override {
        uses->push_back(dst_);
        uses->push_back(src_);
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
    void addDependencies(std::vector<const void*>* uses,
                         std::vector<KernelRef>*) const override {
        uses->push_back(box_.dst);
        uses->push_back(box_.src);
    }
    void describe(NativeGraphDescription* description) const override { description->addBox(box_); }

  private:
    halMemcpy3DParams box_;
};

class KernelOp final : public GraphOp {
  public:
    KernelOp(const halFunction_t* function, halDim3 grid, halDim3 block, size_t sharedBytes,
             const halKernelArg* args, uint32_t numArgs)
        : function_(function),
          serial_(function->serial),
          grid_(grid),
          block_(block),
          sharedBytes_(sharedBytes) {
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
    void addDependencies(std::vector<const void*>* uses,
                         std::vector<KernelRef>* kernels) const override {
        // As an eager launch: every pointer-sized value may point into a pool block.
        for (const halKernelArg& arg : args_) {
            if (arg.size != sizeof(void*)) continue;
            const void* value = nullptr;
            std::memcpy(&value, arg.value, sizeof value);
            uses->push_back(value);
        }
        kernels->push_back({function_, serial_});
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
    void addDependencies(std::vector<const void*>* uses,
                         std::vector<KernelRef>* kernels) const override {
        uses->insert(uses->end(), body_->uses().begin(), body_->uses().end());
        kernels->insert(kernels->end(), body_->kernels().begin(), body_->kernels().end());
    }

  private:
    std::shared_ptr<const GraphBody> body_;
};

}  // namespace

GraphBody::GraphBody(Device* device, std::vector<std::unique_ptr<GraphOp>> ops,
                     std::vector<void*> ownedMemory)
    : device_(device), ops_(std::move(ops)), ownedMemory_(std::move(ownedMemory)) {
    for (const auto& op : ops_) op->addDependencies(&uses_, &kernels_);
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
    for (const KernelRef& kernel : kernels_) {
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
                                      uint32_t numArgs) {
    return std::make_unique<KernelOp>(function, grid, block, sharedBytes, args, numArgs);
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
    if (halError e = body.checkLive(operation)) return e;
    std::lock_guard<std::mutex> lock(graph->launchMutex);
    trace::Timing* timing = trace::beforeSubmit(stream);
    halError status = HAL_SUCCESS;
    if (graph->launched) status = device->vtable->streamWaitEvent(stream->native, graph->finished);
    if (status == HAL_SUCCESS) {
        status = body.enqueue(stream);
        // A launch refused part way still runs the operations enqueued before the refusal: the
        // next launch must follow them as well.
        const halError recorded = device->vtable->eventRecord(graph->finished, stream->native);
        if (recorded == HAL_SUCCESS) graph->launched = true;
        if (status == HAL_SUCCESS) status = recorded;
    }
    // Whatever the plugin accepted may run: the pool must know of it even when a later step
    // was refused.
    noteSubmitted(stream, body.uses().data(), body.uses().size());
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
