// The out-of-line parts of HipApi: host functions in stream order through stream callbacks, and
// the graph nodes (gpu_common/graph.hpp).
#include <endian.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <variant>

#include "api.hpp"
#include "gpu_common/engine/objects.hpp"
#include "plugin_common/elf_layout.hpp"

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
    *kind =
        attributes.hostPointer != nullptr ? gpu::MemoryKind::kPageLocked : gpu::MemoryKind::kDevice;
    return HAL_SUCCESS;
}

namespace {

// A clang offload bundle: the magic, the number of entries, then for each its offset, size and
// target triple (its length, then its characters); each entry is a code object.
constexpr char kBundleMagic[] = "__CLANG_OFFLOAD_BUNDLE__";
constexpr size_t kBundleMagicSize = sizeof kBundleMagic - 1;

// Reads the next 64-bit little-endian field at `*cursor`, or fails past the end.
bool readField(const unsigned char* image, size_t size, size_t* cursor, uint64_t* value) {
    if (size - *cursor < sizeof *value) return false;
    std::memcpy(value, image + *cursor, sizeof *value);
    *value = le64toh(*value);
    *cursor += sizeof *value;
    return true;
}

const char* bundleProblem(const unsigned char* image, size_t size) {
    size_t cursor = kBundleMagicSize;
    uint64_t entries = 0;
    if (!readField(image, size, &cursor, &entries)) return "truncated offload bundle";
    for (uint64_t i = 0; i < entries; ++i) {
        uint64_t offset = 0;
        uint64_t bytes = 0;
        uint64_t tripleSize = 0;
        uint64_t end = 0;
        if (!readField(image, size, &cursor, &offset) || !readField(image, size, &cursor, &bytes) ||
            !readField(image, size, &cursor, &tripleSize) || tripleSize > size - cursor) {
            return "truncated offload bundle (its entry list runs past the end of the image)";
        }
        cursor += tripleSize;
        if (__builtin_add_overflow(offset, bytes, &end) || end > size) {
            return "truncated offload bundle (an entry runs past the end of the image)";
        }
        const unsigned char* entry = image + offset;
        if (isElfImage(entry, bytes)) {
            if (const char* problem = elfLayoutProblem(entry, bytes)) return problem;
        }
    }
    return nullptr;
}

hipError_t addMemsetNode(const gpu::NodeSite<HipApi>& site, const gpu::MemsetRow& row,
                         hipGraphNode_t* node) noexcept {
    hipMemsetParams params{};
    params.dst = row.dst;
    params.value = row.value;
    params.elementSize = 1;
    params.width = row.bytes;
    params.height = 1;
    return HipApi::symbols.graphAddMemsetNode.address(node, site.graph, site.after,
                                                      site.dependencies(), &params);
}

// A row as hipGraphAddMemcpyNode1D; a pitched slice as hipGraphAddMemcpyNode's 3-D copy of
// depth 1 between pitched pointers (extent in bytes).
hipError_t addCopyNode(const gpu::NodeSite<HipApi>& site, const gpu::CopyRows& rows,
                       hipGraphNode_t* node) noexcept {
    const hipMemcpyKind kind = toHipMemcpyKind(rows.kind);
    if (rows.height == 1) {
        return HipApi::symbols.graphAddMemcpyNode.address(node, site.graph, site.after,
                                                          site.dependencies(), rows.dst, rows.src,
                                                          rows.width, kind);
    }
    hipMemcpy3DParms copy{};
    copy.srcPtr =
        make_hipPitchedPtr(const_cast<void*>(rows.src), rows.srcPitch, rows.width, rows.height);
    copy.dstPtr = make_hipPitchedPtr(rows.dst, rows.dstPitch, rows.width, rows.height);
    copy.extent = make_hipExtent(rows.width, rows.height, 1);
    copy.kind = kind;
    return HipApi::symbols.graphAddMemcpyNode3D.address(node, site.graph, site.after,
                                                        site.dependencies(), &copy);
}

// The runtime takes a module's hipFunction_t as a kernel node's function, as its own capture of
// hipModuleLaunchKernel records it.
hipError_t addKernelNode(const gpu::NodeSite<HipApi>& site, const gpu::KernelLaunch& launch,
                         hipGraphNode_t* node) noexcept {
    hipKernelNodeParams kernel{};
    kernel.func = static_cast<void*>(gpu::nativeFunction<HipApi>(launch.function));
    kernel.gridDim = dim3(launch.grid.x, launch.grid.y, launch.grid.z);
    kernel.blockDim = dim3(launch.block.x, launch.block.y, launch.block.z);
    kernel.sharedMemBytes = static_cast<unsigned>(launch.dynamicSharedBytes);
    // ROCm refuses a kernel node with neither kernelParams nor extra, as a kernel without
    // arguments has: an empty list then, which ROCm only reads.
    static void* noArguments[1] = {nullptr};
    kernel.kernelParams = launch.params != nullptr ? launch.params : noArguments;
    return HipApi::symbols.graphAddKernelNode.address(node, site.graph, site.after,
                                                      site.dependencies(), &kernel);
}

}  // namespace

// HIP's nodes belong to the current device, which graphCreate made the graph's.
halError HipApi::addNode(const gpu::NodeSite<HipApi>& site, const gpu::NodeRequest& request,
                         GraphNode* node) noexcept {
    const char* function = symbols.graphAddKernelNode.name;
    hipError_t result = hipSuccess;
    if (const auto* row = std::get_if<gpu::MemsetRow>(&request)) {
        function = symbols.graphAddMemsetNode.name;
        result = addMemsetNode(site, *row, node);
    } else if (const auto* rows = std::get_if<gpu::CopyRows>(&request)) {
        // The 1-D function is checked with the others (graph.hpp); the 3-D one only here.
        const bool pitched = rows->height > 1;
        if (pitched && symbols.graphAddMemcpyNode3D.address == nullptr) {
            return plugin::fail(HAL_ERROR_NOT_SUPPORTED, "%s lacks %s", kLibraryDescription,
                                symbols.graphAddMemcpyNode3D.name);
        }
        function = pitched ? symbols.graphAddMemcpyNode3D.name : symbols.graphAddMemcpyNode.name;
        result = addCopyNode(site, *rows, node);
    } else {
        result = addKernelNode(site, *std::get_if<gpu::KernelLaunch>(&request), node);
    }
    if (result == hipSuccess) return HAL_SUCCESS;
    return gpu::failCall<HipApi>(toHalError(result), result, function);
}

const char* HipApi::imageProblem(const unsigned char* image, size_t size) noexcept {
    if (isElfImage(image, size)) return elfLayoutProblem(image, size);
    if (size >= kBundleMagicSize && std::memcmp(image, kBundleMagic, kBundleMagicSize) == 0) {
        return bundleProblem(image, size);
    }
    return "not a HIP code object (neither an ELF image nor an uncompressed clang offload "
           "bundle; a compressed bundle, from --offload-compress, is not taken: its layout is not "
           "checked)";
}

halError HipApi::instantiate(GraphExec* exec, Graph graph) noexcept {
    return gpu::call<HipApi>(symbols.graphInstantiate, exec, graph, 0ull);
}

}  // namespace polyhal::hip
