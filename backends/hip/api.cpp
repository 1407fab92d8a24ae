// The out-of-line parts of HipApi: host functions in stream order through stream callbacks, and
// the graph nodes (gpu_common/graph.hpp).
#include <memory>
#include <new>

#include "api.hpp"

namespace polyhal::hip {

namespace {

// HIP 5.2 declares hipLaunchHostFunc but its runtime does not export it. A stream callback
// orders the same way (later work of the stream waits for it to return); it carries the
// function and its data, which it frees after the call. The callback runs exactly once, also
// when earlier work failed, and so does the function.
struct HostCall {
    halHostFn fn;
    void* userData;
};

void runHostCall(hipStream_t /*stream*/, hipError_t /*status*/, void* hostCall) noexcept {
    const std::unique_ptr<HostCall> owned(static_cast<HostCall*>(hostCall));
    owned->fn(owned->userData);
}

}  // namespace

halError HipApi::launchHostFunc(Stream stream, halHostFn fn, void* userData) noexcept {
    auto hostCall = std::unique_ptr<HostCall>(new (std::nothrow) HostCall{fn, userData});
    if (hostCall == nullptr) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "no host memory for a host function");
    }
    if (halError error =
            gpu::call<HipApi>(symbols.streamAddCallback, stream, runHostCall, hostCall.get(), 0u)) {
        return error;
    }
    hostCall.release();
    return HAL_SUCCESS;
}

// Pageable memory is hipErrorInvalidValue (HIP 5), or a success without a device pointer (HIP 6's
// hipMemoryTypeUnregistered): the enum's values differ between the two, the pointers do not.
// Managed memory is counted as pageable (a graph leaves it out).
halError HipApi::memoryKind(const void* pointer, gpu::MemoryKind* kind) noexcept {
    hipPointerAttribute_t attributes{};
    const hipError_t result = symbols.pointerGetAttribute.address(&attributes, pointer);
    if (result == hipErrorInvalidValue ||
        (result == hipSuccess && (attributes.devicePointer == nullptr || attributes.isManaged))) {
        *kind = gpu::MemoryKind::kPageable;
        return HAL_SUCCESS;
    }
    if (result != hipSuccess) {
        return gpu::failCall<HipApi>(toHalError(result), result, symbols.pointerGetAttribute.name);
    }
    *kind = attributes.hostPointer != nullptr ? gpu::MemoryKind::kPageLocked
                                              : gpu::MemoryKind::kDevice;
    return HAL_SUCCESS;
}

// One row of bytes.
halError HipApi::addMemsetNode(GraphNode* node, Graph graph, const GraphNode* after, size_t count,
                               Context /*context*/, void* dst, unsigned char value,
                               size_t bytes) noexcept {
    hipMemsetParams params{};
    params.dst = dst;
    params.value = value;
    params.elementSize = 1;
    params.width = bytes;
    params.height = 1;
    return gpu::call<HipApi>(symbols.graphAddMemsetNode, node, graph, after, count, &params);
}

// A row as hipGraphAddMemcpyNode1D; a pitched slice as hipGraphAddMemcpyNode's 3-D copy of
// depth 1 between pitched pointers (extent in bytes).
halError HipApi::addCopyNode(GraphNode* node, Graph graph, const GraphNode* after, size_t count,
                             Context /*context*/, void* dst, size_t dstPitch, const void* src,
                             size_t srcPitch, size_t width, size_t height,
                             halMemcpyKind kind) noexcept {
    if (height == 1) {
        return gpu::call<HipApi>(symbols.graphAddMemcpyNode, node, graph, after, count, dst, src,
                                 width, toHipMemcpyKind(kind));
    }
    if (symbols.graphAddMemcpyNode3D.address == nullptr) {
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED, "%s lacks %s", kLibraryDescription,
                            symbols.graphAddMemcpyNode3D.name);
    }
    hipMemcpy3DParms copy{};
    copy.srcPtr = make_hipPitchedPtr(const_cast<void*>(src), srcPitch, width, height);
    copy.dstPtr = make_hipPitchedPtr(dst, dstPitch, width, height);
    copy.extent = make_hipExtent(width, height, 1);
    copy.kind = toHipMemcpyKind(kind);
    return gpu::call<HipApi>(symbols.graphAddMemcpyNode3D, node, graph, after, count, &copy);
}

// The runtime takes a module's hipFunction_t as a kernel node's function, as its own capture of
// hipModuleLaunchKernel records it.
halError HipApi::addKernelNode(GraphNode* node, Graph graph, const GraphNode* after, size_t count,
                               Function function, halDim3 grid, halDim3 block,
                               size_t dynamicSharedBytes, void** params) noexcept {
    hipKernelNodeParams kernel{};
    kernel.func = static_cast<void*>(function);
    kernel.gridDim = dim3(grid.x, grid.y, grid.z);
    kernel.blockDim = dim3(block.x, block.y, block.z);
    kernel.sharedMemBytes = static_cast<unsigned>(dynamicSharedBytes);
    kernel.kernelParams = params;
    return gpu::call<HipApi>(symbols.graphAddKernelNode, node, graph, after, count, &kernel);
}

halError HipApi::instantiate(GraphExec* exec, Graph graph) noexcept {
    return gpu::call<HipApi>(symbols.graphInstantiate, exec, graph, 0ull);
}

}  // namespace polyhal::hip
