// Graphs: nodes built explicitly, instantiated and launched on streams, and the user objects that
// tie a resource's lifetime to them (graph.hpp in tests/backends/common runs them). The nodes are
// the ones polyhal's cuda plugin adds: memset (one row of bytes), memcpy (CUDA_MEMCPY3D between
// linear memory), kernel and host nodes.
#include "driver.hpp"

using namespace polyhal::doubles;
using namespace polyhal::doubles::cuda;

namespace {

CUgraphNode toHandle(GraphNode* node) {
    return reinterpret_cast<CUgraphNode>(node);
}

#if POLYHAL_CUDA_DOUBLE_VERSION >= 11030
UserObject* fromHandle(CUuserObject object) {
    return reinterpret_cast<UserObject*>(object);
}
#endif

// Adds `node` after `dependencies`, which must be nodes of `graph`.
CUresult addNode(const char* function, CUgraphNode* added, CUgraph graph,
                 const CUgraphNode* dependencies, size_t count, GraphNode node) {
    requireLive(function, graph, kGraph);
    if (added == nullptr || (count > 0 && dependencies == nullptr)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    GraphNode* made = nullptr;
    const std::string problem = graph->graph.add(
        std::move(node), reinterpret_cast<const GraphNode* const*>(dependencies), count, &made);
    if (!problem.empty()) breach(kVendor, "%s: %s", function, problem.c_str());
    *added = toHandle(made);
    return CUDA_SUCCESS;
}

// cuLaunchKernel's checks, at the call; the argument values are copied now (the driver copies
// kernelParams when the node is added), so the caller's storage may go at once.
CUresult addKernelNode(const char* caller, CUgraphNode* node, CUgraph graph,
                       const CUgraphNode* dependencies, size_t count,
                       const CUDA_KERNEL_NODE_PARAMS_v1& params) {
    CUfunction function = requireLive(caller, params.func, kFunction);
    std::shared_ptr<const KernelRun> run;
    if (CUresult prepared =
            prepareLaunch(caller, function, {params.gridDimX, params.gridDimY, params.gridDimZ},
                          {params.blockDimX, params.blockDimY, params.blockDimZ},
                          params.sharedMemBytes, params.kernelParams, params.extra, &run)) {
        return prepared;
    }
    NodeWork work = [run](Stream& stream) { stream.submit([run] { run->execute(); }); };
    return addNode(caller, node, graph, dependencies, count,
                   {std::move(work), function->module->context->device});
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuGraphCreate(CUgraph* graph, unsigned int flags) {
    ENTER();
    if (graph == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    *graph = new CUgraph_st();
    g_handles.add(*graph, kGraph);
    return CUDA_SUCCESS;
}

// Executables made from the graph are independent of it and stay.
CUresult CUDAAPI cuGraphDestroy(CUgraph graph) {
    ENTER();
    requireLive(__func__, graph, kGraph);
    g_handles.remove(graph);
    delete graph;
    return CUDA_SUCCESS;
}

// One row of bytes in device or page-locked host memory of `context`'s device; pageable memory
// is refused as cuMemsetD8 refuses it.
CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode* node, CUgraph graph,
                                      const CUgraphNode* dependencies, size_t count,
                                      const CUDA_MEMSET_NODE_PARAMS* params, CUcontext context) {
    ENTER();
    requireLive(__func__, context, kContext);
    if (params == nullptr || params->width == 0 || params->height == 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (params->elementSize != 1 && params->elementSize != 2 && params->elementSize != 4) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (params->elementSize != 1 || params->height != 1) return CUDA_ERROR_NOT_SUPPORTED;
    Place to{};
    if (!g_memory.locate(toPointer(params->dst), params->width, &to) ||
        to.kind == Place::kPageable) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    const auto value = static_cast<unsigned char>(params->value);
    return addNode(__func__, node, graph, dependencies, count,
                   {fillNodeWork(to, value, params->width), context->device});
}

// Linear memory at both ends (arrays are not something polyhal uses); the copy runs in
// `context`, and each end is where its memory type says.
CUresult CUDAAPI cuGraphAddMemcpyNode(CUgraphNode* node, CUgraph graph,
                                      const CUgraphNode* dependencies, size_t count,
                                      const CUDA_MEMCPY3D* copy, CUcontext context) {
    ENTER();
    requireLive(__func__, context, kContext);
    if (copy == nullptr || copy->WidthInBytes == 0 || copy->Height == 0 || copy->Depth == 0 ||
        copy->WidthInBytes > copy->srcPitch || copy->WidthInBytes > copy->dstPitch) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // As cuMemcpy3D: no pitch above CU_DEVICE_ATTRIBUTE_MAX_PITCH, one row's included.
    if (copy->srcPitch > static_cast<size_t>(kMaxPitch) ||
        copy->dstPitch > static_cast<size_t>(kMaxPitch)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // Rows per slice: the heights only matter between slices.
    const size_t srcHeight = copy->Depth > 1 ? copy->srcHeight : copy->Height;
    const size_t dstHeight = copy->Depth > 1 ? copy->dstHeight : copy->Height;
    if (srcHeight < copy->Height || dstHeight < copy->Height) return CUDA_ERROR_INVALID_VALUE;
    const size_t rows = (copy->Depth - 1) * srcHeight + copy->Height;
    const size_t dstRows = (copy->Depth - 1) * dstHeight + copy->Height;
    Place to{};
    Place from{};
    if (CUresult located =
            locateRows(__func__, "destination", copy->dstMemoryType, copy->dstHost, copy->dstDevice,
                       copy->dstXInBytes, copy->dstZ * dstHeight + copy->dstY, copy->dstPitch,
                       copy->WidthInBytes, dstRows, &to)) {
        return located;
    }
    if (CUresult located =
            locateRows(__func__, "source", copy->srcMemoryType, copy->srcHost, copy->srcDevice,
                       copy->srcXInBytes, copy->srcZ * srcHeight + copy->srcY, copy->srcPitch,
                       copy->WidthInBytes, rows, &from)) {
        return located;
    }
    NodeWork work = boxNodeWork(to, copy->dstPitch, dstHeight, from, copy->srcPitch, srcHeight,
                                copy->WidthInBytes, copy->Height, copy->Depth);
    return addNode(__func__, node, graph, dependencies, count, {std::move(work), context->device});
}

// The first version, which every driver still exports under its plain name (cuda.h maps the name
// to the _v2 function).
#undef cuGraphAddKernelNode
CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode* node, CUgraph graph,
                                      const CUgraphNode* dependencies, size_t count,
                                      const CUDA_KERNEL_NODE_PARAMS_v1* params) {
    ENTER();
    if (params == nullptr || params->func == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return addKernelNode(__func__, node, graph, dependencies, count, *params);
}

#if POLYHAL_CUDA_DOUBLE_VERSION >= 12000
// A CUkernel and a context of its own are what the second version adds; neither is used here.
CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode* node, CUgraph graph,
                                         const CUgraphNode* dependencies, size_t count,
                                         const CUDA_KERNEL_NODE_PARAMS* params) {
    ENTER();
    if (params == nullptr || params->func == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (params->kern != nullptr) return CUDA_ERROR_NOT_SUPPORTED;
    const CUDA_KERNEL_NODE_PARAMS_v1 first{
        params->func,         params->gridDimX,  params->gridDimY,  params->gridDimZ,
        params->blockDimX,    params->blockDimY, params->blockDimZ, params->sharedMemBytes,
        params->kernelParams, params->extra};
    return addKernelNode(__func__, node, graph, dependencies, count, first);
}
#endif

// The function runs on the driver's host-function thread, where no driver call is allowed.
CUresult CUDAAPI cuGraphAddHostNode(CUgraphNode* node, CUgraph graph,
                                    const CUgraphNode* dependencies, size_t count,
                                    const CUDA_HOST_NODE_PARAMS* params) {
    ENTER();
    if (params == nullptr || params->fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return addNode(__func__, node, graph, dependencies, count,
                   {hostNodeWork(params->fn, params->userData), -1});
}

#if POLYHAL_CUDA_DOUBLE_VERSION >= 11040
CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec* executable, CUgraph graph,
                                             unsigned long long flags) {
    ENTER();
    requireLive(__func__, graph, kGraph);
    if (executable == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (flags != 0) return CUDA_ERROR_NOT_SUPPORTED;
    *executable = new CUgraphExec_st{graph->graph.instantiate()};
    g_handles.add(*executable, kGraphExec);
    return CUDA_SUCCESS;
}
#endif

// After the work already in the stream and after the executable's previous launch; every node
// must run in the stream's context.
CUresult CUDAAPI cuGraphLaunch(CUgraphExec executable, CUstream streamHandle) {
    ENTER();
    requireLive(__func__, executable, kGraphExec);
    CUstream_st* stream = requireStream(__func__, streamHandle);
    const int device = stream->context->device;
    const int foreign = executable->executable->foreignNode(device);
    if (foreign >= 0) {
        breach(kVendor,
               "cuGraphLaunch: node %d of the executable runs in another context than the "
               "stream's (device %d)",
               foreign, device);
    }
    if (CUresult sticky = stream->context->sticky.load()) return sticky;
    GraphExecutable::launch(executable->executable, stream->timeline);
    g_graphLaunches.fetch_add(1);
    return CUDA_SUCCESS;
}

// Launches already enqueued complete; the executable goes with the last of them.
CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec executable) {
    ENTER();
    requireLive(__func__, executable, kGraphExec);
    g_handles.remove(executable);
    delete executable;
    return CUDA_SUCCESS;
}

#if POLYHAL_CUDA_DOUBLE_VERSION >= 11030
// CU_USER_OBJECT_NO_DESTRUCTOR_SYNC is required: the only flag the driver defines.
CUresult CUDAAPI cuUserObjectCreate(CUuserObject* object, void* data, CUhostFn destroy,
                                    unsigned int references, unsigned int flags) {
    ENTER();
    if (object == nullptr || destroy == nullptr || references == 0 ||
        flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *object = reinterpret_cast<CUuserObject>(
        new UserObject(destroy, data, references, g_handles, kUserObject));
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuUserObjectRelease(CUuserObject object, unsigned int count) {
    ENTER();
    requireLive(__func__, object, kUserObject);
    if (count == 0) return CUDA_ERROR_INVALID_VALUE;
    if (!fromHandle(object)->releaseOwn(count)) {
        breach(kVendor,
               "cuUserObjectRelease: %u references released, more than the application holds "
               "(references moved to a graph are the graph's)",
               count);
    }
    return CUDA_SUCCESS;
}

// CU_GRAPH_USER_OBJECT_MOVE hands the caller's references to the graph.
CUresult CUDAAPI cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count,
                                         unsigned int flags) {
    ENTER();
    requireLive(__func__, graph, kGraph);
    requireLive(__func__, object, kUserObject);
    if (count == 0 || (flags != 0 && flags != CU_GRAPH_USER_OBJECT_MOVE)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (!graph->graph.retain(fromHandle(object), count, flags == CU_GRAPH_USER_OBJECT_MOVE)) {
        breach(kVendor,
               "cuGraphRetainUserObject: %u references moved, more than the application holds",
               count);
    }
    return CUDA_SUCCESS;
}
#endif

}  // extern "C"
