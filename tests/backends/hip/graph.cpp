// Graphs: nodes built explicitly, instantiated and launched on streams, and the user objects that
// tie a resource's lifetime to them (graph.hpp in tests/backends/common runs them). Where ROCm
// releases differ, the double is the oldest one polyhal accepts (HIP 5.3, the user objects). The
// nodes are the ones polyhal's hip plugin adds: memset (one row of bytes), memcpy (1-D, and 3-D
// between linear memory), kernel and host nodes. A node's work belongs to the device current when
// it is added (a kernel's: its module's device).
#include "runtime.hpp"

using namespace polyhal::doubles;
using namespace polyhal::doubles::hip;

namespace {

UserObject* fromHandle(hipUserObject_t object) {
    return reinterpret_cast<UserObject*>(object);
}

// Adds `node` after `dependencies`, which must be nodes of `graph`.
hipError_t addNode(const char* function, hipGraphNode_t* added, hipGraph_t graph,
                   const hipGraphNode_t* dependencies, size_t count, GraphNode node) {
    requireLive(function, graph, kGraph);
    if (added == nullptr || (count > 0 && dependencies == nullptr)) return hipErrorInvalidValue;
    GraphNode* made = nullptr;
    const std::string problem = graph->graph.add(
        std::move(node), reinterpret_cast<const GraphNode* const*>(dependencies), count, &made);
    if (!problem.empty()) breach(kVendor, "%s: %s", function, problem.c_str());
    *added = reinterpret_cast<hipGraphNode_t>(made);
    return hipSuccess;
}

// A copy's ends, located and checked against its direction as hipMemcpyAsync checks them.
hipError_t locateCopy(void* dst, size_t dstSpan, const void* src, size_t srcSpan,
                      hipMemcpyKind kind, Place* to, Place* from) {
    if (!g_memory.locate(dst, dstSpan, to) || !g_memory.locate(src, srcSpan, from)) {
        return hipErrorInvalidValue;
    }
    return directionMatches(kind, *to, *from) ? hipSuccess : hipErrorInvalidMemcpyDirection;
}

// ROCm may run a host-to-host copy node on the launching thread, after finishing the stream, and
// releases differ on which ends make it do so: a plugin that puts one into a graph may block its
// launches.
void requireStreamOrdered(const char* function, hipMemcpyKind kind) {
    if (kind == hipMemcpyHostToHost) {
        breach(kVendor,
               "%s: a host-to-host copy node may run on the launching thread, blocking the "
               "launch",
               function);
    }
}

}  // namespace

extern "C" {

hipError_t hipGraphCreate(hipGraph_t* graph, unsigned int flags) {
    ENTER();
    if (graph == nullptr || flags != 0) return hipErrorInvalidValue;
    *graph = new ihipGraph();
    g_handles.add(*graph, kGraph);
    return hipSuccess;
}

// Executables made from the graph are independent of it and stay.
hipError_t hipGraphDestroy(hipGraph_t graph) {
    ENTER();
    requireLive(__func__, graph, kGraph);
    g_handles.remove(graph);
    delete graph;
    return hipSuccess;
}

// One row of bytes in device or page-locked host memory; pageable memory is refused as
// hipMemsetD8 refuses it.
hipError_t hipGraphAddMemsetNode(hipGraphNode_t* node, hipGraph_t graph,
                                 const hipGraphNode_t* dependencies, size_t count,
                                 const hipMemsetParams* params) {
    ENTER();
    if (params == nullptr || params->width == 0 || params->height == 0) {
        return hipErrorInvalidValue;
    }
    if (params->elementSize != 1 && params->elementSize != 2 && params->elementSize != 4) {
        return hipErrorInvalidValue;
    }
    if (params->elementSize != 1 || params->height != 1) return hipErrorNotSupported;
    Place to{};
    if (!g_memory.locate(params->dst, params->width, &to) || to.kind == Place::kPageable) {
        return hipErrorInvalidValue;
    }
    const auto value = static_cast<unsigned char>(params->value);
    return addNode(__func__, node, graph, dependencies, count,
                   {fillNodeWork(to, value, params->width), currentDevice()});
}

hipError_t hipGraphAddMemcpyNode1D(hipGraphNode_t* node, hipGraph_t graph,
                                   const hipGraphNode_t* dependencies, size_t count, void* dst,
                                   const void* src, size_t bytes, hipMemcpyKind kind) {
    ENTER();
    if (bytes == 0) return hipErrorInvalidValue;
    requireStreamOrdered(__func__, kind);
    Place to{};
    Place from{};
    if (hipError_t located = locateCopy(dst, bytes, src, bytes, kind, &to, &from)) {
        return located;
    }
    return addNode(__func__, node, graph, dependencies, count,
                   {copyNodeWork(to, bytes, from, bytes, bytes, 1), currentDevice()});
}

// Pitched pointers only (arrays are not something polyhal uses); the extent's width is in bytes,
// and a slice is the pitched pointer's ysize rows.
hipError_t hipGraphAddMemcpyNode(hipGraphNode_t* node, hipGraph_t graph,
                                 const hipGraphNode_t* dependencies, size_t count,
                                 const hipMemcpy3DParms* copy) {
    ENTER();
    if (copy == nullptr) return hipErrorInvalidValue;
    if (copy->srcArray != nullptr || copy->dstArray != nullptr) return hipErrorNotSupported;
    requireStreamOrdered(__func__, copy->kind);
    const hipExtent& extent = copy->extent;
    const hipPitchedPtr& dstPtr = copy->dstPtr;
    const hipPitchedPtr& srcPtr = copy->srcPtr;
    if (extent.width == 0 || extent.height == 0 || extent.depth == 0 ||
        extent.width > dstPtr.pitch || extent.width > srcPtr.pitch) {
        return hipErrorInvalidValue;
    }
    // No pitch above hipDeviceAttributeMaxPitch.
    if (dstPtr.pitch > static_cast<size_t>(kMaxPitch) ||
        srcPtr.pitch > static_cast<size_t>(kMaxPitch)) {
        return hipErrorInvalidValue;
    }
    const size_t dstHeight = extent.depth > 1 ? dstPtr.ysize : extent.height;
    const size_t srcHeight = extent.depth > 1 ? srcPtr.ysize : extent.height;
    if (dstHeight < extent.height || srcHeight < extent.height) return hipErrorInvalidValue;
    const auto span = [&extent](size_t pitch, size_t height) {
        return pitch * ((extent.depth - 1) * height + extent.height - 1) + extent.width;
    };
    auto* dst = static_cast<unsigned char*>(dstPtr.ptr) +
                (copy->dstPos.z * dstHeight + copy->dstPos.y) * dstPtr.pitch + copy->dstPos.x;
    const auto* src = static_cast<const unsigned char*>(srcPtr.ptr) +
                      (copy->srcPos.z * srcHeight + copy->srcPos.y) * srcPtr.pitch + copy->srcPos.x;
    Place to{};
    Place from{};
    if (hipError_t located = locateCopy(dst, span(dstPtr.pitch, dstHeight), src,
                                        span(srcPtr.pitch, srcHeight), copy->kind, &to, &from)) {
        return located;
    }
    NodeWork work = boxNodeWork(to, dstPtr.pitch, dstHeight, from, srcPtr.pitch, srcHeight,
                                extent.width, extent.height, extent.depth);
    return addNode(__func__, node, graph, dependencies, count, {std::move(work), currentDevice()});
}

// `func` is a module's hipFunction_t, as the runtime takes it for a kernel node made from
// hipModuleLaunchKernel; hipModuleLaunchKernel's checks, at the call, and the argument values
// copied now, so that the caller's storage may go at once.
hipError_t hipGraphAddKernelNode(hipGraphNode_t* node, hipGraph_t graph,
                                 const hipGraphNode_t* dependencies, size_t count,
                                 const hipKernelNodeParams* params) {
    ENTER();
    if (params == nullptr || params->func == nullptr) return hipErrorInvalidValue;
    // As ROCm: a kernel node without arguments still names a (possibly empty) list.
    if (params->kernelParams == nullptr && params->extra == nullptr) return hipErrorInvalidValue;
    auto* function = requireLive(__func__, static_cast<hipFunction_t>(params->func), kFunction);
    const dim3 grid = params->gridDim;
    const dim3 block = params->blockDim;
    std::shared_ptr<const KernelRun> run;
    if (hipError_t prepared =
            prepareLaunch(__func__, function, {grid.x, grid.y, grid.z}, {block.x, block.y, block.z},
                          params->sharedMemBytes, params->kernelParams, params->extra, &run)) {
        return prepared;
    }
    NodeWork work = [run](Stream& stream) { stream.submit([run] { run->execute(); }); };
    return addNode(__func__, node, graph, dependencies, count,
                   {std::move(work), function->module->device});
}

// The function runs on the runtime's callback thread, where no runtime call is allowed.
hipError_t hipGraphAddHostNode(hipGraphNode_t* node, hipGraph_t graph,
                               const hipGraphNode_t* dependencies, size_t count,
                               const hipHostNodeParams* params) {
    ENTER();
    if (params == nullptr || params->fn == nullptr) return hipErrorInvalidValue;
    return addNode(__func__, node, graph, dependencies, count,
                   {hostNodeWork(params->fn, params->userData), -1});
}

hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* executable, hipGraph_t graph,
                                        unsigned long long flags) {
    ENTER();
    requireLive(__func__, graph, kGraph);
    if (executable == nullptr) return hipErrorInvalidValue;
    if (flags != 0) return hipErrorNotSupported;
    *executable = new hipGraphExec{graph->graph.instantiate()};
    g_handles.add(*executable, kGraphExec);
    return hipSuccess;
}

// After the work already in the stream and after the executable's previous launch; every node
// must be of the stream's device.
hipError_t hipGraphLaunch(hipGraphExec_t executable, hipStream_t stream) {
    ENTER();
    requireLive(__func__, executable, kGraphExec);
    requireLive(__func__, stream, kStream);
    const int foreign = executable->executable->foreignNode(stream->device);
    if (foreign >= 0) {
        breach(kVendor,
               "hipGraphLaunch: node %d of the executable is of another device than the "
               "stream's (device %d)",
               foreign, stream->device);
    }
    GraphExecutable::launch(executable->executable, stream->timeline);
    g_graphLaunches.fetch_add(1);
    return hipSuccess;
}

// As the oldest runtime with user objects: ROCm frees the executable at once and runs its user
// objects' destructors then, so destroying one whose launch has not completed is a breach
// (CUDA's cuGraphExecDestroy waits for them instead).
hipError_t hipGraphExecDestroy(hipGraphExec_t executable) {
    ENTER();
    requireLive(__func__, executable, kGraphExec);
    if (executable->executable->running()) {
        breach(kVendor,
               "hipGraphExecDestroy: a launch of the executable has not completed; the runtime "
               "frees it, and runs its user objects' destructors, at once");
    }
    g_handles.remove(executable);
    delete executable;
    return hipSuccess;
}

// hipUserObjectNoDestructorSync is required: the only flag the runtime defines.
hipError_t hipUserObjectCreate(hipUserObject_t* object, void* data, hipHostFn_t destroy,
                               unsigned int references, unsigned int flags) {
    ENTER();
    if (object == nullptr || destroy == nullptr || references == 0 ||
        flags != hipUserObjectNoDestructorSync) {
        return hipErrorInvalidValue;
    }
    *object = reinterpret_cast<hipUserObject_t>(
        new UserObject(destroy, data, references, g_handles, kUserObject));
    return hipSuccess;
}

hipError_t hipUserObjectRelease(hipUserObject_t object, unsigned int count) {
    ENTER();
    requireLive(__func__, object, kUserObject);
    if (count == 0) return hipErrorInvalidValue;
    if (!fromHandle(object)->releaseOwn(count)) {
        breach(kVendor,
               "hipUserObjectRelease: %u references released, more than the application holds "
               "(references moved to a graph are the graph's)",
               count);
    }
    return hipSuccess;
}

// hipGraphUserObjectMove hands the caller's references to the graph.
hipError_t hipGraphRetainUserObject(hipGraph_t graph, hipUserObject_t object, unsigned int count,
                                    unsigned int flags) {
    ENTER();
    requireLive(__func__, graph, kGraph);
    requireLive(__func__, object, kUserObject);
    if (count == 0 || (flags != 0 && flags != hipGraphUserObjectMove)) return hipErrorInvalidValue;
    if (!graph->graph.retain(fromHandle(object), count, flags == hipGraphUserObjectMove)) {
        breach(kVendor,
               "hipGraphRetainUserObject: %u references moved, more than the application holds",
               count);
    }
    return hipSuccess;
}

// ---- Inspection, for tests (not part of the HIP API) ----

// How many handles of `kind` ("hipGraphExec_t", "hipUserObject_t" ...) are alive.
size_t polyhalHipDoubleLiveHandles(const char* kind) {
    return g_handles.count(kind);
}

// How many hipGraphLaunch calls succeeded: a graph the plugin runs natively is launched here.
uint64_t polyhalHipDoubleGraphLaunches() {
    return g_graphLaunches.load();
}

}  // extern "C"
