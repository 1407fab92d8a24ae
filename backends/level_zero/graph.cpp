// Native graph entries: a graph is a closed regular command list of the device's compute engines,
// and a launch executes it on the device's graph queue in the stream's order.
//
// The list holds the graph's operations with a barrier between each two (Level Zero 1.4 orders
// commands only across barriers) and ends with a barrier that signals the graph's `end` event.
// A launch (Stream::launchRegularList) appends to the stream a barrier that tells the stream's
// host-function thread to execute the list, a barrier on `end` that holds the stream's later work
// (event records, copies, markers) until the list has run, and a reset of `end` on the device. A
// regular list may not be executed while the device may still read it from a previous
// execution: hence the execution waits for the stream's earlier work, which the core orders after
// the graph's previous launch.
//
// Host functions are declined: a command list cannot call the host, and splitting the list
// around each of them would cost the round trips a native launch saves.
#include <polyhal/plugin_support.hpp>

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>

#include "device.hpp"
#include "engine/copy.hpp"
#include "engine/translate.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "module.hpp"
#include "stream.hpp"
#include "symbols.hpp"

namespace polyhal::level_zero {

namespace {

// The command list and what goes with it, shared by the graph and its pending launches: the
// last of them to go destroys it and calls the description's release.
class Executable {
  public:
    Executable(ze_command_queue_handle_t queue, SlotRef end) : queue(queue), end(std::move(end)) {}
    ~Executable() {
        if (list != nullptr) {
            const ze_result_t result = ze.zeCommandListDestroy.address(list);
            if (result != ZE_RESULT_SUCCESS) {
                plugin::log(HAL_LOG_WARN, "zeCommandListDestroy: %s", resultName(result));
            }
        }
        // `end` goes back to the pool reset (by the last launch's stream) and never marked
        // submitted: the pool hands it out again as it is.
        end.reset();
        if (release != nullptr) release(releaseContext);
    }
    Executable(const Executable&) = delete;
    Executable& operator=(const Executable&) = delete;

    const ze_command_queue_handle_t queue;
    SlotRef end;
    ze_command_list_handle_t list = nullptr;
    void (*release)(void*) = nullptr;  // set once the graph is built
    void* releaseContext = nullptr;
};

struct Graph {
    using Handle = halPluginGraph;
    std::shared_ptr<Executable> executable;
};

halError graphQueueOf(Device& device, ze_command_queue_handle_t* queue) {
    std::lock_guard<std::mutex> lock(device.graphQueueMutex);
    if (device.graphQueue == nullptr) {
        const ze_command_queue_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                           nullptr,
                                           device.computeQueueOrdinal,
                                           0,
                                           0,
                                           ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                           ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        POLYHAL_ZE_RETURN_IF_ERROR(zeCommandQueueCreate, device.driver->context, device.device,
                                   &desc, &device.graphQueue);
    }
    *queue = device.graphQueue;
    return HAL_SUCCESS;
}

halError appendCopy(ze_command_list_handle_t list, const Copy& copy) {
    return check(copy.append(list, nullptr, 0, nullptr), copy.call());
}

// A box beyond the 32-bit region fields goes a row at a time, as memcpy3DAsync's does; the rows
// are one operation, unordered among themselves.
halError appendBox(ze_command_list_handle_t list, const halMemcpy3DParams& box) {
    if (Copy::fitsRegion(box)) return appendCopy(list, Copy::region(box));
    auto* dst = static_cast<unsigned char*>(box.dst);
    const auto* src = static_cast<const unsigned char*>(box.src);
    for (size_t slice = 0; slice < box.depth; ++slice) {
        for (size_t row = 0; row < box.height; ++row) {
            const Copy copy =
                Copy::linear(dst + slice * box.dstSlicePitch + row * box.dstPitch,
                             src + slice * box.srcSlicePitch + row * box.srcPitch, box.width);
            if (halError error = appendCopy(list, copy); error != HAL_SUCCESS) return error;
        }
    }
    return HAL_SUCCESS;
}

halError appendKernel(ze_command_list_handle_t list, const halPluginGraphOp& op) {
    const auto& kernel = op.params.kernel;
    Function& function = plugin::fromHandle<Function>(kernel.function);
    // Level Zero uses the group size and arguments set when the launch is appended (the
    // specification of zeKernelSetArgumentValue): a kernel launched twice by one graph, or
    // eagerly meanwhile, keeps each launch's own.
    std::lock_guard<std::mutex> lock(function.launchMutex);
    if (halError error = setLaunchArguments(function, kernel.block, kernel.dynamicSharedBytes,
                                            kernel.args, kernel.numArgs);
        error != HAL_SUCCESS) {
        return error;
    }
    const ze_group_count_t groups = toGroupCount(kernel.grid);
    POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendLaunchKernel, list, function.kernel, &groups,
                               nullptr, 0, nullptr);
    return HAL_SUCCESS;
}

halError appendOperation(ze_command_list_handle_t list, const halPluginGraphOp& op) {
    switch (op.kind) {
    case HAL_PLUGIN_GRAPH_OP_MEMSET: {
        const auto& memset = op.params.memset;
        // The one-byte pattern is read during the call.
        POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendMemoryFill, list, memset.dst, &memset.value,
                                   sizeof memset.value, memset.count, nullptr, 0, nullptr);
        return HAL_SUCCESS;
    }
    case HAL_PLUGIN_GRAPH_OP_COPY: {
        const auto& copy = op.params.copy;  // every kind: one context reaches all the memory
        return appendCopy(list, Copy::linear(copy.dst, copy.src, copy.count));
    }
    case HAL_PLUGIN_GRAPH_OP_COPY_3D: return appendBox(list, op.params.copy3D);
    case HAL_PLUGIN_GRAPH_OP_KERNEL: return appendKernel(list, op);
    default: break;
    }
    return plugin::fail(HAL_ERROR_NOT_SUPPORTED, "graph operation kind %u is unknown",
                        static_cast<unsigned>(op.kind));
}

const halPluginGraphOp& operationOf(const halPluginGraphDesc& desc, uint32_t index) {
    const auto* ops = reinterpret_cast<const unsigned char*>(desc.ops);
    return *reinterpret_cast<const halPluginGraphOp*>(ops + index * desc.opSize);
}

}  // namespace

halError graphCreate(halPluginDevice handle, const halPluginGraphDesc* desc,
                     halPluginGraph* graph) {
    if (desc->size < offsetof(halPluginGraphDesc, opSize) + sizeof desc->opSize ||
        desc->opSize < sizeof(halPluginGraphOp)) {
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED,
                            "the graph's description is older than this backend's");
    }
    for (uint32_t i = 0; i < desc->numOps; ++i) {
        if (operationOf(*desc, i).kind == HAL_PLUGIN_GRAPH_OP_HOST_FUNCTION) {
            return plugin::fail(HAL_ERROR_NOT_SUPPORTED,
                                "operation %u of the graph is a host function, which a Level Zero "
                                "command list cannot call",
                                i);
        }
    }
    Device& device = plugin::fromHandle<Device>(handle);
    ze_command_queue_handle_t queue = nullptr;
    if (halError error = graphQueueOf(device, &queue); error != HAL_SUCCESS) return error;
    SlotRef end;
    if (halError error = device.events().acquire(&end); error != HAL_SUCCESS) return error;
    // From here a failure destroys what was made: the executable owns it.
    auto executable = std::make_shared<Executable>(queue, std::move(end));
    const ze_command_list_desc_t listDesc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr,
                                          device.computeQueueOrdinal, 0};
    POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListCreate, device.driver->context, device.device,
                               &listDesc, &executable->list);
    ze_command_list_handle_t list = executable->list;
    for (uint32_t i = 0; i < desc->numOps; ++i) {
        if (i > 0)
            POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendBarrier, list, nullptr, 0, nullptr);
        if (halError error = appendOperation(list, operationOf(*desc, i)); error != HAL_SUCCESS) {
            return error;
        }
    }
    POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendBarrier, list, executable->end->event, 0,
                               nullptr);
    POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListClose, list);
    auto made = std::make_unique<Graph>();
    made->executable = std::move(executable);
    // Only now: a failed create must not call it.
    made->executable->release = desc->release;
    made->executable->releaseContext = desc->releaseContext;
    *graph = plugin::toHandle(made.release());
    return HAL_SUCCESS;
}

halError graphLaunch(halPluginGraph handle, halPluginStream stream) {
    const std::shared_ptr<Executable>& executable = plugin::fromHandle<Graph>(handle).executable;
    Stream& on = plugin::fromHandle<Stream>(stream);
    HostFuncCall call;
    call.execution =
        ListExecution{executable->queue, executable->list, executable->end->event, executable};
    EventSlotPool& events = on.device().events();
    if (halError error = events.acquire(&call.started); error != HAL_SUCCESS) return error;
    if (halError error = events.acquire(&call.finished); error != HAL_SUCCESS) return error;
    return on.launchRegularList(std::move(call));
}

halError graphDestroy(halPluginGraph graph) {
    delete &plugin::fromHandle<Graph>(graph);  // pending launches keep the executable
    return HAL_SUCCESS;
}

}  // namespace polyhal::level_zero
