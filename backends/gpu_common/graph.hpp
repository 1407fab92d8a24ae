// Native graph entries: a captured graph as the vendor's own graph (cuGraph*, hipGraph*), one
// node per operation, each depending on the one before, so that a launch is one
// cuGraphLaunch/hipGraphLaunch. Where the vendor lacks a function graphs need, or cannot put an
// operation into a graph as the eager call runs it, graphCreate declines with
// HAL_ERROR_NOT_SUPPORTED and the reason, and the core replays the graph.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_GRAPH_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_GRAPH_HPP_

#include <polyhal/box_rows.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>

#include "gpu_common/engine/current_device.hpp"
#include "gpu_common/engine/graph_node.hpp"
#include "gpu_common/engine/max_pitch.hpp"
#include "gpu_common/engine/native_graph.hpp"
#include "gpu_common/engine/objects.hpp"
#include "gpu_common/engine/vendor_call.hpp"
#include "gpu_common/module.hpp"

namespace polyhal::gpu {

// The first of `functions` the vendor's library lacks, or nullptr.
template <class... Fn>
const char* firstMissing(const Symbol<Fn>&... functions) noexcept {
    const char* missing = nullptr;
    ((missing = missing == nullptr && functions.address == nullptr ? functions.name : missing),
     ...);
    return missing;
}

template <class Api>
halError requireGraphFunctions() noexcept {
    const auto& vendor = Api::symbols;
    const char* missing =
        firstMissing(vendor.graphCreate, vendor.graphDestroy, vendor.graphAddMemsetNode,
                     vendor.graphAddMemcpyNode, vendor.graphAddKernelNode, vendor.graphAddHostNode,
                     vendor.graphInstantiate, vendor.graphLaunch, vendor.graphExecDestroy,
                     vendor.userObjectCreate, vendor.userObjectRelease,
                     vendor.graphRetainUserObject, vendor.pointerGetAttribute);
    if (missing == nullptr) return HAL_SUCCESS;
    return plugin::fail(HAL_ERROR_NOT_SUPPORTED, "%s lacks %s (native graphs need %s)",
                        Api::kLibraryDescription, missing, Api::kNativeGraphsSince);
}

// The description's release, called by the vendor when the user object that carries it loses its
// last reference: the graph and every executable made from it are gone, and every launch has
// completed. CUDA calls it on a thread of its own, where its API must not be called; ROCm inside
// the hipGraphExecDestroy that drops the last reference. The core's release calls nothing of the
// plugin's. Disarmed (release = nullptr) when graphCreate
// fails after the user object was made, since a failed create must not release.
struct GraphRelease {
    void (*release)(void*);
    void* context;
};

inline void runGraphRelease(void* payload) noexcept {
    const std::unique_ptr<GraphRelease> owned(static_cast<GraphRelease*>(payload));
    if (owned->release != nullptr) owned->release(owned->context);
}

// The vendor graph under construction; destroyed with its nodes when the build ends, whether an
// executable was made from it or not.
template <class Api>
class GraphBuilder {
  public:
    using Node = typename Api::GraphNode;

    explicit GraphBuilder(const Device<Api>& device) : device_(device) {}
    GraphBuilder(const GraphBuilder&) = delete;
    GraphBuilder& operator=(const GraphBuilder&) = delete;
    ~GraphBuilder() {
        // Nothing to report a failure to: the build's own error, if any, is the one returned.
        if (graph_ != nullptr) (void)Api::symbols.graphDestroy.address(graph_);
    }

    // The device's maximum pitch bounds a copy node's rows and pitches (below).
    halError begin() noexcept {
        if (halError error = maxCopyPitch(device_, &maxPitch_)) return error;
        constexpr size_t kPage = 4096;  // pieces of whole pages stay aligned
        maxRowBytes_ = maxPitch_ / kPage * kPage;
        return call<Api>(Api::symbols.graphCreate, &graph_, 0u);
    }

    // One node after the previous one, or declines the operation.
    halError add(const halPluginGraphOp& op) noexcept {
        Node node{};
        if (halError error = addNode(op, &node)) return error;
        previous_ = node;
        hasPrevious_ = true;
        return HAL_SUCCESS;
    }

    // Attaches the release to the graph, as a user object the graph and its executables hold,
    // and instantiates it.
    halError instantiate(const halPluginGraphDesc& desc, typename Api::GraphExec* exec) noexcept {
        const auto& vendor = Api::symbols;
        auto payload = std::unique_ptr<GraphRelease>(
            new (std::nothrow) GraphRelease{desc.release, desc.releaseContext});
        if (payload == nullptr) {
            return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "no host memory for a graph's release");
        }
        typename Api::UserObject object{};
        if (halError error = call<Api>(vendor.userObjectCreate, &object, payload.get(),
                                       runGraphRelease, 1u, Api::kUserObjectNoDestructorSync)) {
            return error;
        }
        GraphRelease* armed = payload.release();  // the user object's now
        if (halError error = call<Api>(vendor.graphRetainUserObject, graph_, object, 1u,
                                       Api::kGraphUserObjectMove)) {
            armed->release = nullptr;
            (void)vendor.userObjectRelease.address(object, 1u);
            return error;
        }
        if (halError error = Api::instantiate(exec, graph_)) {
            armed->release = nullptr;  // before the graph, and with it the object, goes
            return error;
        }
        return HAL_SUCCESS;
    }

  private:
    halError addNode(const halPluginGraphOp& op, Node* node) noexcept {
        const NodeSite<Api> site{graph_, hasPrevious_ ? &previous_ : nullptr, device_.context};
        switch (op.kind) {
        case HAL_PLUGIN_GRAPH_OP_MEMSET: {
            const auto& memset = op.params.memset;
            if (halError error =
                    requireKind(memset.dst, MemoryKind::kDevice, "a memset's destination")) {
                return error;
            }
            return Api::addNode(site, MemsetRow{memset.dst, memset.value, memset.count}, node);
        }
        case HAL_PLUGIN_GRAPH_OP_COPY: return addCopy(op, node);
        case HAL_PLUGIN_GRAPH_OP_COPY_3D: return addBox(op.params.copy3D, node);
        case HAL_PLUGIN_GRAPH_OP_KERNEL: {
            const auto& kernel = op.params.kernel;
            if (halError error =
                    checkLaunch<Api>(plugin::fromHandle<Function<Api>>(kernel.function),
                                     kernel.dynamicSharedBytes, kernel.args, kernel.numArgs)) {
                return error;
            }
            // The vendor copies the values when the node is added.
            KernelParams params;
            if (halError error = params.init(kernel.args, kernel.numArgs)) return error;
            return Api::addNode(site,
                                KernelLaunch{kernel.function, kernel.grid, kernel.block,
                                             kernel.dynamicSharedBytes, params.get()},
                                node);
        }
        case HAL_PLUGIN_GRAPH_OP_HOST_FUNCTION: {
            typename Api::HostNodeParams params{};
            params.fn = op.params.hostFunction.fn;
            params.userData = op.params.hostFunction.userData;
            return call<Api>(Api::symbols.graphAddHostNode, node, graph_, site.after,
                             site.dependencies(), &params);
        }
        default: break;
        }
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED, "graph operation kind %u is unknown",
                            static_cast<unsigned>(op.kind));
    }

    // A node after the previous one of the same operation (a box's slices, a long copy's
    // pieces), or after the previous operation's for the first.
    halError addPiece(const NodeRequest& request, bool first, Node* node) noexcept {
        if (!first) {
            previous_ = *node;
            hasPrevious_ = true;
        }
        const NodeSite<Api> site{graph_, hasPrevious_ ? &previous_ : nullptr, device_.context};
        return Api::addNode(site, request, node);
    }

    // A copy node's row, its pitch too, is at most the device's maximum pitch (2^31 - 1 bytes on
    // current GPUs, where the eager 1-D copy has no such bound): a longer copy is several nodes.
    halError addCopy(const halPluginGraphOp& op, Node* node) noexcept {
        const auto& copy = op.params.copy;
        if (halError error = requireCopyNodeEnds(copy.dst, copy.src, copy.kind)) return error;
        return addContiguous(copy.dst, copy.src, copy.count, copy.kind, true, node);
    }

    // `count` bytes as rows of at most maxRowBytes_, one node each; `first`: the first piece of
    // its operation.
    halError addContiguous(void* dstStart, const void* srcStart, size_t count, halMemcpyKind kind,
                           bool first, Node* node) noexcept {
        auto* dst = static_cast<unsigned char*>(dstStart);
        const auto* src = static_cast<const unsigned char*>(srcStart);
        for (size_t done = 0; done < count;) {
            const size_t bytes = std::min(count - done, maxRowBytes_);
            const CopyRows row{dst + done, bytes, src + done, bytes, bytes, 1, kind};
            if (halError error = addPiece(row, first && done == 0, node)) return error;
            done += bytes;
        }
        return HAL_SUCCESS;
    }

    // One 2-D copy node per slice, each after the one before, as memcpy3DAsync copies a box: the
    // vendors' 3-D copies want a slice pitch that is a whole number of rows. Pitches above the
    // maximum: a node per row.
    halError addBox(const halMemcpy3DParams& box, Node* node) noexcept {
        if (halError error = requireCopyNodeEnds(box.dst, box.src, box.kind)) return error;
        auto* dst = static_cast<unsigned char*>(box.dst);
        const auto* src = static_cast<const unsigned char*>(box.src);
        if (box.dstPitch > maxPitch_ || box.srcPitch > maxPitch_) {
            bool first = true;
            return forEachBoxRow(box, [&](size_t dstOffset, size_t srcOffset) {
                const halError error = addContiguous(dst + dstOffset, src + srcOffset, box.width,
                                                     box.kind, first, node);
                first = false;
                return error;
            });
        }
        for (size_t slice = 0; slice < box.depth; ++slice) {
            const CopyRows rows{dst + slice * box.dstSlicePitch,
                                box.dstPitch,
                                src + slice * box.srcSlicePitch,
                                box.srcPitch,
                                box.width,
                                box.height,
                                box.kind};
            if (halError error = addPiece(rows, slice == 0, node)) return error;
        }
        return HAL_SUCCESS;
    }

    // A copy node reads and writes its host ends when it runs, with none of the staging and
    // waiting the eager copy does for pageable memory: only page-locked host memory is put into
    // a graph, and host-to-host copies only where the vendor runs them on the device.
    halError requireCopyNodeEnds(const void* dst, const void* src, halMemcpyKind kind) noexcept {
        if (kind == HAL_MEMCPY_HOST_TO_HOST && !Api::kHostToHostCopyNodes) {
            return plugin::fail(HAL_ERROR_NOT_SUPPORTED,
                                "a %s graph may run a host-to-host copy on the launching "
                                "thread, blocking the launch",
                                Api::kName);
        }
        const bool hostSource =
            kind == HAL_MEMCPY_HOST_TO_DEVICE || kind == HAL_MEMCPY_HOST_TO_HOST;
        const bool hostTarget =
            kind == HAL_MEMCPY_DEVICE_TO_HOST || kind == HAL_MEMCPY_HOST_TO_HOST;
        if (hostSource) {
            if (halError error = requireKind(src, MemoryKind::kPageLocked, "a copy's source")) {
                return error;
            }
        }
        if (hostTarget) {
            return requireKind(dst, MemoryKind::kPageLocked, "a copy's destination");
        }
        return HAL_SUCCESS;
    }

    halError requireKind(const void* pointer, MemoryKind wanted, const char* what) noexcept {
        MemoryKind kind{};
        if (halError error = Api::memoryKind(pointer, &kind)) return error;
        if (kind == wanted) return HAL_SUCCESS;
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED,
                            "%s (%p) is %s; a %s graph takes only %s there", what, pointer,
                            describe(kind), Api::kName, describe(wanted));
    }

    const Device<Api>& device_;
    typename Api::Graph graph_{};
    Node previous_{};
    bool hasPrevious_ = false;
    size_t maxPitch_ = 0;
    size_t maxRowBytes_ = 0;
};

// The vendor's executable of the description's operations, on the current device.
template <class Api>
halError buildExecutable(const Device<Api>& device, const halPluginGraphDesc& desc,
                         typename Api::GraphExec* exec) noexcept {
    GraphBuilder<Api> builder(device);
    if (halError error = builder.begin()) return error;
    if (halError error = plugin::forEachGraphOp(
            desc, [&](const halPluginGraphOp& op) { return builder.add(op); })) {
        return error;
    }
    return builder.instantiate(desc, exec);
}

// Declines, with the reason, what the vendor cannot run as the eager calls would: the core then
// replays the graph. A failure part-way destroys the vendor graph and everything in it.
template <class Api>
halError graphCreate(halPluginDevice deviceHandle, const halPluginGraphDesc* desc,
                     halPluginGraph* handle) noexcept {
    const Device<Api>* device = &plugin::fromHandle<Device<Api>>(deviceHandle);
    if (halError error = requireGraphFunctions<Api>()) return error;
    reapRetiredGraphs<Api>();
    const CurrentDevice<Api> current(*device);
    if (halError error = current.error()) return error;
    auto graph = std::unique_ptr<NativeGraph<Api>>(new (std::nothrow) NativeGraph<Api>{device});
    if (graph == nullptr) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "no host memory for a graph");
    }
    if constexpr (!Api::kExecDestroyWaitsForLaunches) {
        if (halError error =
                call<Api>(Api::symbols.eventCreate, &graph->lastLaunch, Api::kEventDisableTiming)) {
            return error;
        }
    }
    if (halError error = buildExecutable(*device, *desc, &graph->native)) {
        if (graph->lastLaunch != nullptr) {
            (void)Api::symbols.eventDestroy.address(graph->lastLaunch);
        }
        return error;
    }
    *handle = plugin::toHandle(graph.release());
    return HAL_SUCCESS;
}

// After the launch, where the vendor frees a running executable at once, the record of its end,
// which the destroy waits for (engine/native_graph.hpp).
template <class Api>
halError graphLaunch(halPluginGraph graphHandle, halPluginStream streamHandle) noexcept {
    const NativeGraph<Api>& graph = plugin::fromHandle<NativeGraph<Api>>(graphHandle);
    const Stream<Api>& stream = plugin::fromHandle<Stream<Api>>(streamHandle);
    reapRetiredGraphs<Api>();
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    const halError launched = call<Api>(Api::symbols.graphLaunch, graph.native, stream.native);
    if constexpr (!Api::kExecDestroyWaitsForLaunches) {
        // Without the record of its end, a destroy could free a running executable (a launch
        // refused part way may have enqueued some nodes): the launch is waited for instead.
        if (launched != HAL_SUCCESS) {
            (void)Api::symbols.streamSynchronize.address(stream.native);
        } else if (Api::symbols.eventRecord.address(graph.lastLaunch, stream.native) !=
                   Api::kSuccess) {
            plugin::log(HAL_LOG_WARN,
                        "graph launch: the record of its end failed; waited for the launch");
            (void)Api::symbols.streamSynchronize.address(stream.native);
        }
    }
    return launched;
}

// Does not wait for pending launches. CUDA frees the executable once they complete, and with it
// drops the last reference to the release's user object; where the vendor would free it at
// once, a graph whose last launch is pending is retired until it completes. Needs no current
// device, so the executable goes even when the device cannot be made current.
template <class Api>
halError graphDestroy(halPluginGraph handle) noexcept {
    std::unique_ptr<NativeGraph<Api>> graph(&plugin::fromHandle<NativeGraph<Api>>(handle));
    reapRetiredGraphs<Api>();
    const CurrentDevice<Api> current(*graph->device);
    if constexpr (!Api::kExecDestroyWaitsForLaunches) {
        if (Api::symbols.eventQuery.address(graph->lastLaunch) != Api::kSuccess) {
            RetiredGraphs<Api>::add(std::move(graph));
            return current.error();
        }
    }
    const halError destroyed = destroyNativeGraph(std::move(graph));
    return current.error() != HAL_SUCCESS ? current.error() : destroyed;
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_GRAPH_HPP_
