// Implements native_graph.hpp.
#include "native_graph.hpp"

#include "device.hpp"
#include "error.hpp"
#include "log.hpp"

namespace polyhal {
namespace {

void releaseHostCalls(void* hostCalls) {
    delete static_cast<std::deque<GraphHostCall>*>(hostCalls);
}

}  // namespace

NativeGraphDescription::NativeGraphDescription()
    : hostCalls_(std::make_unique<std::deque<GraphHostCall>>()) {}

NativeGraphDescription::~NativeGraphDescription() = default;

decltype(halPluginGraphOp::params)& NativeGraphDescription::add(halPluginGraphOpKind kind) {
    halPluginGraphOp& op = ops_.emplace_back();
    op.kind = kind;
    return op.params;
}

void NativeGraphDescription::addMemset(void* dst, unsigned char value, size_t count) {
    add(HAL_PLUGIN_GRAPH_OP_MEMSET).memset = {dst, count, value};
}

void NativeGraphDescription::addCopy(void* dst, const void* src, size_t count, halMemcpyKind kind) {
    add(HAL_PLUGIN_GRAPH_OP_COPY).copy = {dst, src, count, kind};
}

void NativeGraphDescription::addBox(const halMemcpy3DParams& box) {
    add(HAL_PLUGIN_GRAPH_OP_COPY_3D).copy3D = box;
}

void NativeGraphDescription::addKernel(halPluginFunction function, halDim3 grid, halDim3 block,
                                       size_t sharedBytes, const halKernelArg* args,
                                       uint32_t numArgs) {
    add(HAL_PLUGIN_GRAPH_OP_KERNEL).kernel = {function, grid, block, sharedBytes, args, numArgs};
}

void NativeGraphDescription::addHostFunction(halHostFn fn, void* userData) {
    GraphHostCall& call = hostCalls_->emplace_back(GraphHostCall{fn, userData});
    add(HAL_PLUGIN_GRAPH_OP_HOST_FUNCTION).hostFunction = {runGraphHostCall, &call};
}

halPluginGraph NativeGraphDescription::build(Device* device) {
    const halPluginDispatchTable& vtable = *device->vtable;
    if (vtable.graphCreate == nullptr || ops_.empty()) return nullptr;
    halPluginGraphDesc desc{};
    desc.size = sizeof desc;
    desc.ops = ops_.data();
    desc.numOps = static_cast<uint32_t>(ops_.size());
    desc.opSize = sizeof(halPluginGraphOp);
    desc.release = releaseHostCalls;
    desc.releaseContext = hostCalls_.get();
    halPluginGraph graph = nullptr;
    const halError status = vtable.graphCreate(device->native, &desc, &graph);
    const std::string& backend = device->backend->name;
    if (status == HAL_SUCCESS && graph == nullptr) {
        // Nothing to launch or destroy, and no release will come: the host calls stay ours.
        logger().warn(
            "halStreamEndCapture: the {} backend's graphCreate succeeded without a graph; the "
            "core replays the graph of {} operations",
            backend, ops_.size());
        return nullptr;
    }
    if (status == HAL_SUCCESS) {
        hostCalls_.release();  // the plugin releases them with its executable
        logger().debug(
            "halStreamEndCapture: the {} backend runs the graph of {} operations as "
            "one native launch",
            backend, ops_.size());
        return graph;
    }
    const std::string reason = takePluginErrorMessage(status, backend.c_str(), "graphCreate");
    if (status == HAL_ERROR_NOT_SUPPORTED) {
        logger().debug("halStreamEndCapture: the core replays the graph of {} operations ({})",
                       ops_.size(), reason);
    } else {
        logger().warn(
            "halStreamEndCapture: the {} backend could not build the graph of {} "
            "operations ({}); the core replays it",
            backend, ops_.size(), reason);
    }
    return nullptr;
}

}  // namespace polyhal
