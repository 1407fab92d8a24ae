// Native graphs: a graph is its operations decoded once (kernel arguments copied), and a launch
// hands them to the stream's host-work thread, which enqueues them on a queue of their own while
// the stream's queue holds the work after them (engine/host_work_thread.hpp). The launching
// thread spends four OpenCL calls on it, whatever the graph holds: OpenCL's enqueues cost about
// a microsecond each on PoCL, which makes issuing a graph's operations on the caller's thread
// cost most of what the eager calls do.
//
// PoCL's cl_khr_command_buffer would not help: its CPU device records nothing natively and
// enqueues each recorded command again at every launch (docs/benchmarks.md). Host functions are
// declined (the core replays the graph): they would hold the host-work thread that enqueues the
// commands after them.
//
// What the eager calls refuse before they enqueue is refused here when the graph is made, since
// a launch's enqueues happen later, on the host-work thread: a kernel's argument count, its
// arguments (set on the kernel once, as the eager launch sets them) and its work-group size.
// The core refuses the rest (overlapping copies among them) at the captured call. A command that
// still cannot be enqueued at a launch fails the stream, named (engine/host_work_failures.hpp).
#include <polyhal/plugin_support.hpp>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device.hpp"
#include "engine/host_work_thread.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "module.hpp"
#include "platform.hpp"
#include "stream.hpp"

namespace polyhal::opencl {

namespace {

class GraphBatch final : public CommandBatch {
  public:
    explicit GraphBatch(const Device& device) : device_(device) {}
    // Calls the description's release: the last launch's commands have completed.
    ~GraphBatch() override {
        if (release_ != nullptr) release_(releaseContext_);
    }
    GraphBatch(const GraphBatch&) = delete;
    GraphBatch& operator=(const GraphBatch&) = delete;

    // Keeps a copy of `op`; declines what the batch does not run.
    halError add(const halPluginGraphOp& op);
    // Set once graphCreate succeeds: a graph it fails to make must not call the release.
    void releaseWith(void (*release)(void*), void* context) {
        release_ = release;
        releaseContext_ = context;
    }

    cl_int enqueue(cl_command_queue queue, cl_event after, cl_event* last,
                   std::string* failure) const override;

  private:
    // Enqueues `op`; on failure *call names what failed.
    cl_int enqueueOp(const halPluginGraphOp& op, cl_command_queue queue, cl_uint numWaits,
                     const cl_event* waits, cl_event* event, const char** call) const;
    // Operation `index` and the `call` that failed with `error`, for the stream's report.
    std::string describeFailure(size_t index, const char* call, cl_int error) const;

    // The arguments a kernel operation passes, set on its kernel as the eager launch sets them:
    // clSetKernelArg refuses what does not fit a parameter, which the eager launch reports
    // before it enqueues anything.
    halError requireArgumentsFit(const Function& function, const halPluginGraphOp& op) const;

    // A launch whose blocks the kernel cannot take: eager, clEnqueueNDRangeKernel refuses it
    // synchronously, which the commands enqueued later by the host-work thread could not.
    halError requireGroupFits(const Function& function, halDim3 block) const;

    const Device& device_;
    std::vector<plugin::KeptGraphOp> ops_;
    void (*release_)(void*) = nullptr;
    void* releaseContext_ = nullptr;
};

halError GraphBatch::add(const halPluginGraphOp& op) {
    switch (op.kind) {
    case HAL_PLUGIN_GRAPH_OP_MEMSET:
    case HAL_PLUGIN_GRAPH_OP_COPY: break;
    case HAL_PLUGIN_GRAPH_OP_KERNEL: {
        const auto& kernel = op.params.kernel;
        const Function& function = plugin::fromHandle<Function>(kernel.function);
        if (halError error =
                checkArgumentCount(function, kernel.numArgs, kernel.dynamicSharedBytes)) {
            return error;
        }
        if (halError error = requireArgumentsFit(function, op)) return error;
        if (halError error = requireGroupFits(function, kernel.block)) return error;
        break;
    }
    case HAL_PLUGIN_GRAPH_OP_HOST_FUNCTION:
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED,
                            "a host function would hold the thread that enqueues an OpenCL "
                            "graph's commands");
    default:
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED, "graph operation kind %u is not run here",
                            static_cast<unsigned>(op.kind));
    }
    ops_.emplace_back(op);
    return HAL_SUCCESS;
}

halError GraphBatch::requireArgumentsFit(const Function& function,
                                         const halPluginGraphOp& op) const {
    const auto& kernel = op.params.kernel;
    std::lock_guard lock(function.launchMutex());
    return setLaunchArguments(function, device_.platform().svm, kernel.args, kernel.numArgs,
                              kernel.dynamicSharedBytes);
}

halError GraphBatch::requireGroupFits(const Function& function, halDim3 block) const {
    size_t most = 0;
    if (clGetKernelWorkGroupInfo(function.kernel(), device_.id(), CL_KERNEL_WORK_GROUP_SIZE,
                                 sizeof most, &most, nullptr) != CL_SUCCESS) {
        return HAL_SUCCESS;  // unknown: left to the enqueue
    }
    const uint64_t size = uint64_t{block.x} * block.y * block.z;
    if (size <= most) return HAL_SUCCESS;
    return plugin::fail(HAL_ERROR_NOT_SUPPORTED,
                        "kernel '%s' takes at most %zu work-items per group; the graph launches "
                        "it with %ux%ux%u, which the core's replay refuses at the launch",
                        function.name().c_str(), most, block.x, block.y, block.z);
}

cl_int GraphBatch::enqueueOp(const halPluginGraphOp& op, cl_command_queue queue, cl_uint numWaits,
                             const cl_event* waits, cl_event* event, const char** call) const {
    switch (op.kind) {
    case HAL_PLUGIN_GRAPH_OP_MEMSET: {
        const auto& fill = op.params.memset;
        *call = "clEnqueueSVMMemFill";
        return clEnqueueSVMMemFill(queue, fill.dst, &fill.value, sizeof fill.value, fill.count,
                                   numWaits, waits, event);
    }
    case HAL_PLUGIN_GRAPH_OP_COPY: {
        const auto& copy = op.params.copy;
        *call = "clEnqueueSVMMemcpy";
        return clEnqueueSVMMemcpy(queue, CL_FALSE, copy.dst, copy.src, copy.count, numWaits, waits,
                                  event);
    }
    case HAL_PLUGIN_GRAPH_OP_KERNEL: {
        const auto& kernel = op.params.kernel;
        const Function& function = plugin::fromHandle<Function>(kernel.function);
        // The cl_kernel holds arguments until the enqueue reads them: eager launches of the
        // same function take turns with this one.
        std::lock_guard lock(function.launchMutex());
        cl_int error = CL_SUCCESS;
        if (setLaunchArguments(function, device_.platform().svm, kernel.args, kernel.numArgs,
                               kernel.dynamicSharedBytes, &error) != HAL_SUCCESS) {
            *call = "clSetKernelArg";
            return error;
        }
        *call = "clEnqueueNDRangeKernel";
        return enqueueKernel(queue, function, kernel.grid, kernel.block, numWaits, waits, event);
    }
    default: return CL_SUCCESS;  // add() kept no other kind
    }
}

std::string GraphBatch::describeFailure(size_t index, const char* call, cl_int error) const {
    const halPluginGraphOp& op = ops_[index].op();
    char what[160];
    switch (op.kind) {
    case HAL_PLUGIN_GRAPH_OP_MEMSET:
        std::snprintf(what, sizeof what, "a memset of %zu bytes at %p", op.params.memset.count,
                      op.params.memset.dst);
        break;
    case HAL_PLUGIN_GRAPH_OP_COPY:
        std::snprintf(what, sizeof what, "a copy of %zu bytes from %p to %p", op.params.copy.count,
                      op.params.copy.src, op.params.copy.dst);
        break;
    default:
        std::snprintf(what, sizeof what, "kernel '%s'",
                      plugin::fromHandle<Function>(op.params.kernel.function).name().c_str());
        break;
    }
    char message[320];
    std::snprintf(message, sizeof message, "graph operation %zu of %zu (%s): %s: %s (%d)",
                  index + 1, ops_.size(), what, call, errorName(error), error);
    return message;
}

// The queue is in order: each command follows the one before, the first follows `after`. Only
// the last one's event is asked for.
cl_int GraphBatch::enqueue(cl_command_queue queue, cl_event after, cl_event* last,
                           std::string* failure) const {
    *last = nullptr;
    for (size_t i = 0; i < ops_.size(); ++i) {
        const bool first = i == 0;
        const bool final = i + 1 == ops_.size();
        cl_event event = nullptr;
        const char* call = "";
        const cl_int error = enqueueOp(ops_[i].op(), queue, first ? 1 : 0, first ? &after : nullptr,
                                       final ? &event : nullptr, &call);
        if (error != CL_SUCCESS) {  // the caller waits for what was enqueued
            try {
                *failure = describeFailure(i, call, error);
            } catch (...) {
                failure->clear();  // no memory for the text: the failure is still noted
            }
            return error;
        }
        if (final) *last = event;
    }
    return CL_SUCCESS;
}

struct Graph {
    using Handle = halPluginGraph;
    // Shared with the launches not yet completed.
    std::shared_ptr<const GraphBatch> batch;
};

}  // namespace

halError graphCreate(halPluginDevice device, const halPluginGraphDesc* desc,
                     halPluginGraph* graph) {
    auto batch = std::make_shared<GraphBatch>(plugin::fromHandle<Device>(device));
    if (halError error = plugin::forEachGraphOp(
            *desc, [&](const halPluginGraphOp& op) { return batch->add(op); })) {
        return error;
    }
    auto made = std::make_unique<Graph>();
    batch->releaseWith(desc->release, desc->releaseContext);
    made->batch = std::move(batch);
    *graph = plugin::toHandle(made.release());
    return HAL_SUCCESS;
}

halError graphLaunch(halPluginGraph graph, halPluginStream stream) {
    HostWorkList work(1);
    work.front().batch = plugin::fromHandle<Graph>(graph).batch;
    return plugin::fromHandle<Stream>(stream).postHostWork(work);
}

// Launches still to complete keep the batch, and with it the description's release.
halError graphDestroy(halPluginGraph graph) {
    return plugin::destroyHandle<Graph>(graph);
}

}  // namespace polyhal::opencl
