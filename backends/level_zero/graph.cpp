// Native graphs: a graph is recorded as a regular command list, its operations in list order with
// a barrier between each two, and a launch appends that list to the stream's immediate command
// list with zeCommandListImmediateAppendCommandListsExp (the driver extension
// ZE_experimental_immediate_command_list_append): one submission, in the stream's order, on the
// stream's own engine, so no other queue's progress is ever waited for.
//
// Level Zero lets no command list be submitted again while the device may still be running it.
// A launch therefore takes a recording whose last run has finished, and records another one when
// every recording is still running: a launch never blocks the host, and however many launches are
// in flight, each is one submission. Recordings are kept in the order of their last launch, so
// that the one a launch tries first is the one most likely finished, and a graph keeps as many as
// it ever had in flight at once. Only where the driver will not record another list (out of
// memory, say) are the operations appended one by one, as the eager calls would. While the stream
// holds its work on the host after a host function, the recording is submitted with that work
// (stream.hpp). A graph destroyed with a run pending is retired, and destroyed by the first graph
// entry or device synchronisation that finds its last run finished; a device's close waits for
// it.
//
// Declined with the reason, so that the core replays the graph: a driver without the extension or
// a loader without its function (platform.cpp), host functions (each call signals events of their
// own, which a list recorded once cannot), and memory that is not the driver's (a recorded list
// reads pageable host memory at each run, which the specification promises only for
// zeMemAllocHost memory).
#include <polyhal/plugin_support.hpp>

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "device.hpp"
#include "engine/copy.hpp"
#include "engine/retired.hpp"
#include "engine/translate.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "module.hpp"
#include "stream.hpp"
#include "symbols.hpp"

namespace polyhal::level_zero {

namespace {

// A regular command list holding the graph's operations, and the signal of its last run; destroys
// the list.
class Recording {
  public:
    Recording(const Driver* driver, ze_command_list_handle_t list) : driver(driver), list(list) {}
    ~Recording();
    Recording(Recording&& other) noexcept
        : driver(other.driver),
          list(std::exchange(other.list, nullptr)),
          lastRun(std::move(other.lastRun)) {}
    Recording& operator=(Recording&&) = delete;

    const Driver* driver;
    ze_command_list_handle_t list;
    SlotRef lastRun;
};

Recording::~Recording() {
    if (list == nullptr) return;
    const ze_result_t result = driver->destroyCommandList(list);
    if (result != ZE_RESULT_SUCCESS) {
        plugin::log(HAL_LOG_WARN, "destroying a graph: zeCommandListDestroy: %s",
                    resultName(result));
    }
}

}  // namespace

class Graph {
  public:
    using Handle = halPluginGraph;

    explicit Graph(Device* device) : device_(device) {}
    // Destroys the recordings and calls the description's release, if given: every run has
    // finished.
    ~Graph();
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;

    Device& device() const { return *device_; }
    // Set once graphCreate succeeds: a graph it fails to make must not call the release.
    void releaseWith(void (*release)(void*), void* context) {
        release_ = release;
        releaseContext_ = context;
    }

    // Keeps a copy of `op`; declines what a recorded list cannot run as the eager call would.
    halError add(const halPluginGraphOp& op);
    // Records the first command list, so that a graph the driver refuses is declined at once.
    halError recordFirst();
    halError launch(Stream& stream);
    // Whether every run enqueued so far has finished (or failed); never blocks.
    bool isFinished();
    // Blocks until every run enqueued so far has finished.
    void waitIdle();

  private:
    halError requireDriverMemory(const void* pointer, const char* what) const;
    halError record(ze_command_list_handle_t list);
    halError recordOp(const halPluginGraphOp& op, ze_command_list_handle_t list);
    // The operations appended to `stream` one by one, through the eager entries.
    halError replay(halPluginStream stream);
    // Takes out a recording whose last run has finished, or records a new one.
    halError takeIdleRecordingLocked(std::optional<Recording>* recording);

    Device* const device_;
    void (*release_)(void*) = nullptr;
    void* releaseContext_ = nullptr;
    std::vector<plugin::KeptGraphOp> ops_;
    std::mutex mutex_;                  // launches come from any thread
    std::deque<Recording> recordings_;  // by their last launch, the earliest first
    SlotRef lastLaunch_;                // signals once the last launch has finished
};

Graph::~Graph() {
    recordings_.clear();
    if (release_ != nullptr) release_(releaseContext_);
}

halError Graph::requireDriverMemory(const void* pointer, const char* what) const {
    auto properties = describedAs<ze_memory_allocation_properties_t>(
        ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES);
    POLYHAL_ZE_RETURN_IF_ERROR(zeMemGetAllocProperties, device_->driver->context, pointer,
                               &properties, nullptr);
    if (properties.type != ZE_MEMORY_TYPE_UNKNOWN) return HAL_SUCCESS;
    return plugin::fail(HAL_ERROR_NOT_SUPPORTED,
                        "%s %p is pageable host memory, which a Level Zero command list recorded "
                        "once would read at each run (the specification promises that only for "
                        "zeMemAllocHost memory)",
                        what, pointer);
}

halError Graph::add(const halPluginGraphOp& op) {
    switch (op.kind) {
    case HAL_PLUGIN_GRAPH_OP_MEMSET:
        if (halError error = requireDriverMemory(op.params.memset.dst, "a fill's destination")) {
            return error;
        }
        break;
    case HAL_PLUGIN_GRAPH_OP_COPY:
        if (halError error = requireDriverMemory(op.params.copy.src, "a copy's source")) {
            return error;
        }
        if (halError error = requireDriverMemory(op.params.copy.dst, "a copy's destination")) {
            return error;
        }
        break;
    case HAL_PLUGIN_GRAPH_OP_COPY_3D:
        if (halError error = requireDriverMemory(op.params.copy3D.src, "a box copy's source")) {
            return error;
        }
        if (halError error =
                requireDriverMemory(op.params.copy3D.dst, "a box copy's destination")) {
            return error;
        }
        break;
    case HAL_PLUGIN_GRAPH_OP_KERNEL: break;  // checked as the eager launch is, when recorded
    case HAL_PLUGIN_GRAPH_OP_HOST_FUNCTION:
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED,
                            "a host function cannot run inside a Level Zero command list "
                            "recorded once: each call signals events of its own");
    default:
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED, "graph operation kind %u is unknown",
                            static_cast<unsigned>(op.kind));
    }
    ops_.emplace_back(op);
    return HAL_SUCCESS;
}

halError Graph::recordOp(const halPluginGraphOp& op, ze_command_list_handle_t list) {
    const auto appendCopy = [&](const Copy& copy) {
        return check(copy.append(list, nullptr, 0, nullptr), copy.call());
    };
    switch (op.kind) {
    case HAL_PLUGIN_GRAPH_OP_MEMSET: {
        const auto& fill = op.params.memset;
        POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendMemoryFill, list, fill.dst, &fill.value,
                                   sizeof fill.value, fill.count, nullptr, 0, nullptr);
        return HAL_SUCCESS;
    }
    case HAL_PLUGIN_GRAPH_OP_COPY: {
        const auto& copy = op.params.copy;
        return appendCopy(Copy::linear(copy.dst, copy.src, copy.count));
    }
    case HAL_PLUGIN_GRAPH_OP_COPY_3D: return forEachCopyOf(op.params.copy3D, appendCopy);
    case HAL_PLUGIN_GRAPH_OP_KERNEL: {
        const auto& kernel = op.params.kernel;
        Function& function = plugin::fromHandle<Function>(kernel.function);
        // The kernel's arguments are read when the launch is appended.
        std::lock_guard<std::mutex> lock(function.launchMutex);
        if (halError error = setLaunchArguments(function, kernel.block, kernel.dynamicSharedBytes,
                                                kernel.args, kernel.numArgs)) {
            return error;
        }
        const ze_group_count_t groups = toGroupCount(kernel.grid);
        POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendLaunchKernel, list, function.kernel, &groups,
                                   nullptr, 0, nullptr);
        return HAL_SUCCESS;
    }
    default: break;  // add() kept no other kind
    }
    return HAL_SUCCESS;
}

halError Graph::record(ze_command_list_handle_t list) {
    for (size_t i = 0; i < ops_.size(); ++i) {
        // Level Zero orders a list's commands only across barriers.
        if (i > 0)
            POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendBarrier, list, nullptr, 0, nullptr);
        if (halError error = recordOp(ops_[i].op(), list)) return error;
    }
    POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListClose, list);
    return HAL_SUCCESS;
}

halError Graph::takeIdleRecordingLocked(std::optional<Recording>* taken) {
    if (!recordings_.empty()) {
        Recording& earliest = recordings_.front();
        const ze_result_t status = earliest.lastRun
                                       ? ze.zeEventQueryStatus.address(earliest.lastRun->event)
                                       : ZE_RESULT_SUCCESS;
        if (status != ZE_RESULT_NOT_READY) {
            if (halError error = check(status, "zeEventQueryStatus")) return error;
            taken->emplace(std::move(earliest));
            recordings_.pop_front();
            return HAL_SUCCESS;
        }
    }
    const ze_command_list_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr,
                                      device_->computeQueueOrdinal, 0};
    ze_command_list_handle_t list = nullptr;
    const ze_result_t created = device_->driver->createCommandList(device_->device, desc, &list);
    if (halError error = check(created, "zeCommandListCreate"); error != HAL_SUCCESS) return error;
    Recording recording(device_->driver, list);
    if (halError error = record(list)) return error;
    taken->emplace(std::move(recording));
    return HAL_SUCCESS;
}

halError Graph::recordFirst() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::optional<Recording> first;
    if (halError error = takeIdleRecordingLocked(&first)) return error;
    recordings_.push_back(std::move(*first));
    return HAL_SUCCESS;
}

halError Graph::replay(halPluginStream stream) {
    for (const plugin::KeptGraphOp& kept : ops_) {
        const halPluginGraphOp& op = kept.op();
        halError error = HAL_SUCCESS;
        switch (op.kind) {
        case HAL_PLUGIN_GRAPH_OP_MEMSET:
            error = memsetAsync(stream, op.params.memset.dst, op.params.memset.value,
                                op.params.memset.count);
            break;
        case HAL_PLUGIN_GRAPH_OP_COPY:
            error = memcpyAsync(stream, op.params.copy.dst, op.params.copy.src,
                                op.params.copy.count, op.params.copy.kind);
            break;
        case HAL_PLUGIN_GRAPH_OP_COPY_3D: error = memcpy3DAsync(stream, &op.params.copy3D); break;
        case HAL_PLUGIN_GRAPH_OP_KERNEL: {
            const auto& kernel = op.params.kernel;
            error = launchKernel(stream, kernel.function, kernel.grid, kernel.block,
                                 kernel.dynamicSharedBytes, kernel.args, kernel.numArgs);
            break;
        }
        default: break;  // add() kept no other kind
        }
        if (error != HAL_SUCCESS) return error;
    }
    return HAL_SUCCESS;
}

halError Graph::launch(Stream& stream) {
    SlotRef done;
    if (halError error = device_->events().acquire(&done)) return error;
    std::lock_guard<std::mutex> lock(mutex_);
    std::optional<Recording> recording;
    if (halError error = takeIdleRecordingLocked(&recording)) {
        // The driver would not record another list now (out of memory, say): the operations
        // one by one still run the launch.
        plugin::log(HAL_LOG_WARN,
                    "a graph launch appends its operations one by one: recording another "
                    "command list failed (halError %d)",
                    static_cast<int>(error));
        const halError replayed = replay(plugin::toHandle(&stream));
        // What was appended before a failure still runs: the launch's end follows it either way,
        // so that the graph outlives it.
        const halError marked = stream.signalAfterPriorWork(done);
        if (marked == HAL_SUCCESS) lastLaunch_ = std::move(done);
        return replayed != HAL_SUCCESS ? replayed : marked;
    }
    const halError submitted = stream.submitRegularList(recording->list, done);
    if (submitted == HAL_SUCCESS) {
        recording->lastRun = done;
        lastLaunch_ = std::move(done);
    }
    // Last in launch order; one that was not submitted is as idle as it was.
    recordings_.push_back(std::move(*recording));
    return submitted;
}

bool Graph::isFinished() {
    std::lock_guard<std::mutex> lock(mutex_);
    return !lastLaunch_ || ze.zeEventQueryStatus.address(lastLaunch_->event) != ZE_RESULT_NOT_READY;
}

void Graph::waitIdle() {
    SlotRef last;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        last = lastLaunch_;
    }
    if (!last) return;
    const ze_result_t result = ze.zeEventHostSynchronize.address(last->event, UINT64_MAX);
    if (result != ZE_RESULT_SUCCESS) {
        plugin::log(HAL_LOG_WARN, "waiting for a graph's last launch: zeEventHostSynchronize: %s",
                    resultName(result));
    }
}

void GraphDeleter::operator()(Graph* graph) const {
    delete graph;
}

void reapRetiredGraphs(Device& device, bool wait) {
    reapRetired(device.graphsMutex, device.retiringGraphs, wait);
}

halError graphCreate(halPluginDevice deviceHandle, const halPluginGraphDesc* desc,
                     halPluginGraph* handle) {
    Device& device = plugin::fromHandle<Device>(deviceHandle);
    reapRetiredGraphs(device, false);
    if (!device.driver->submitsCommandLists()) {
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED, "no native Level Zero graphs: %s",
                            device.driver->commandListSubmissionMissing());
    }
    auto graph = std::make_unique<Graph>(&device);
    if (halError error = plugin::forEachGraphOp(
            *desc, [&](const halPluginGraphOp& op) { return graph->add(op); })) {
        return error;
    }
    if (halError error = graph->recordFirst()) return error;
    graph->releaseWith(desc->release, desc->releaseContext);
    *handle = plugin::toHandle(graph.release());
    return HAL_SUCCESS;
}

halError graphLaunch(halPluginGraph graph, halPluginStream stream) {
    Graph& launched = plugin::fromHandle<Graph>(graph);
    reapRetiredGraphs(launched.device(), false);
    return launched.launch(plugin::fromHandle<Stream>(stream));
}

// A graph with a run pending is retired, for a later reap to destroy: destroying must not wait.
halError graphDestroy(halPluginGraph handle) {
    Graph* graph = &plugin::fromHandle<Graph>(handle);
    Device& device = graph->device();
    if (graph->isFinished()) {
        GraphDeleter()(graph);
    } else {
        std::lock_guard<std::mutex> lock(device.graphsMutex);
        // Reserved first: should it throw, the graph stays as it was.
        device.retiringGraphs.reserve(device.retiringGraphs.size() + 1);
        device.retiringGraphs.emplace_back(graph);
    }
    reapRetiredGraphs(device, false);
    return HAL_SUCCESS;
}

}  // namespace polyhal::level_zero
