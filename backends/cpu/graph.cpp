// Native graph entries: a graph is a pre-decoded batch (engine/graph_batch.hpp), and a launch
// queues it on the stream as one command.
#include <polyhal/plugin_support.hpp>

#include <cstddef>
#include <memory>
#include <utility>

#include "engine/graph_batch.hpp"
#include "entries.hpp"
#include "module.hpp"
#include "stream.hpp"

namespace polyhal::cpu {

namespace {

struct Graph {
    using Handle = halPluginGraph;
    std::shared_ptr<GraphBatch> batch;  // shared with the launches still queued
};

halError decode(const halPluginGraphOp& op, BatchStep* step) {
    switch (op.kind) {
    case HAL_PLUGIN_GRAPH_OP_MEMSET: {
        const auto& memset = op.params.memset;
        *step = FillBytes{memset.dst, memset.count, memset.value};
        return HAL_SUCCESS;
    }
    case HAL_PLUGIN_GRAPH_OP_COPY: {
        const auto& copy = op.params.copy;  // every kind: all memory is host memory
        *step = CopyBytes{copy.dst, copy.src, copy.count};
        return HAL_SUCCESS;
    }
    case HAL_PLUGIN_GRAPH_OP_COPY_3D: *step = makeCopyBox(op.params.copy3D); return HAL_SUCCESS;
    case HAL_PLUGIN_GRAPH_OP_KERNEL: {
        const auto& kernel = op.params.kernel;
        KernelLaunch& launch = step->emplace<KernelLaunch>();
        return makeKernelLaunch(kernel.function, kernel.grid, kernel.block,
                                kernel.dynamicSharedBytes, kernel.args, kernel.numArgs, &launch);
    }
    case HAL_PLUGIN_GRAPH_OP_HOST_FUNCTION: {
        const auto& host = op.params.hostFunction;
        *step = HostCall{host.fn, host.userData};
        return HAL_SUCCESS;
    }
    default: break;
    }
    return plugin::fail(HAL_ERROR_NOT_SUPPORTED, "graph operation kind %u is unknown",
                        static_cast<unsigned>(op.kind));
}

}  // namespace

halError graphCreate(halPluginDevice /*device: all memory is host memory*/,
                     const halPluginGraphDesc* desc, halPluginGraph* graph) {
    auto made = std::make_unique<Graph>();
    made->batch = std::make_shared<GraphBatch>(desc->numOps);
    uint32_t index = 0;
    if (halError error = plugin::forEachGraphOp(
            *desc,
            [&](const halPluginGraphOp& op) { return decode(op, &made->batch->step(index++)); });
        error != HAL_SUCCESS) {
        return error;
    }
    // Only now: a failed create must not call it.
    made->batch->releaseWith(desc->release, desc->releaseContext);
    *graph = plugin::toHandle(made.release());
    return HAL_SUCCESS;
}

halError graphLaunch(halPluginGraph graph, halPluginStream stream) {
    plugin::fromHandle<Stream>(stream).submit(GraphRun{plugin::fromHandle<Graph>(graph).batch});
    return HAL_SUCCESS;
}

halError graphDestroy(halPluginGraph graph) {
    return plugin::destroyHandle<Graph>(graph);  // queued launches keep the batch
}

}  // namespace polyhal::cpu
