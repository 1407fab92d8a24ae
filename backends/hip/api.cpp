// The out-of-line parts of HipApi: host functions in stream order through stream callbacks, the
// graph nodes (gpu_common/graph.hpp), and what a module's code object says of its kernels.
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <variant>
#include <vector>

#include "api.hpp"
#include "code_object.hpp"
#include "gpu_common/engine/objects.hpp"
#include "plugin_common/elf_layout.hpp"
#include "support/dynamic_library.hpp"

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

// A request as hipGraphAddMemsetNode, hipGraphAddMemcpyNode1D (a row; a pitched slice:
// hipGraphAddMemcpyNode) or hipGraphAddKernelNode. HIP's nodes belong to the current device,
// which graphCreate made the graph's.
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

// Why hipModuleLoadDataEx, which takes no size, would read past the image: a code object (an ELF
// image) whose tables or sections run past its end, a clang offload bundle whose entries do, or
// any other format (compressed bundles included, whose layout is not checked). nullptr when
// nothing is wrong.
const char* HipApi::imageProblem(const unsigned char* image, size_t size) noexcept {
    if (isElfImage(image, size)) return elfLayoutProblem(image, size);
    if (!isOffloadBundle(image, size)) {
        return "not a HIP code object (neither an ELF image nor an uncompressed clang offload "
               "bundle; a compressed bundle, from --offload-compress, is not taken: its layout is "
               "not checked)";
    }
    std::vector<BundleEntry> entries;
    try {
        if (const char* problem = readOffloadBundle(image, size, &entries)) return problem;
    } catch (const std::bad_alloc&) {
        return "an offload bundle with more entries than host memory holds";
    }
    for (const BundleEntry& entry : entries) {
        if (!isElfImage(entry.image, entry.size)) continue;
        if (const char* problem = elfLayoutProblem(entry.image, entry.size)) return problem;
    }
    return nullptr;
}

namespace {

// comgr, opened once, when the first module is loaded; nullptr where ROCm has none.
const ComgrSymbols* codeObjectManager() noexcept {
    static const ComgrSymbols* const loaded = []() -> const ComgrSymbols* {
        static DynamicLibrary library;
        static ComgrSymbols symbols;
        std::string error;
        library = DynamicLibrary::openFirst(
            kComgrLibraries, sizeof kComgrLibraries / sizeof *kComgrLibraries, &error);
        if (!library || symbols.resolve(library) != nullptr) return nullptr;
        library.keepLoaded();
        return &symbols;
    }();
    return loaded;
}

// The code object of `image` whose metadata describes its kernels: the image itself, or a
// bundle's first AMD GPU code object. Every code object of a bundle is built from one source, so
// each declares the same parameters, whichever GPU the runtime picks.
bool findCodeObject(const unsigned char* image, size_t size, BundleEntry* codeObject) {
    if (!isOffloadBundle(image, size)) {
        *codeObject = BundleEntry{{}, image, size};
        return true;
    }
    std::vector<BundleEntry> entries;
    if (readOffloadBundle(image, size, &entries) != nullptr) return false;
    for (const BundleEntry& entry : entries) {
        if (entry.target.find("amdgcn-") != std::string_view::npos && entry.size > 0) {
            *codeObject = entry;
            return true;
        }
    }
    return false;
}

}  // namespace

halError HipApi::describeModule(const unsigned char* image, size_t size,
                                ModuleInfo* info) noexcept {
    const ComgrSymbols* comgr = codeObjectManager();
    if (comgr == nullptr) return HAL_SUCCESS;
    try {
        BundleEntry codeObject{};
        if (!findCodeObject(image, size, &codeObject)) return HAL_SUCCESS;
        if (readKernelParameters(*comgr, codeObject.image, codeObject.size, &info->kernels) !=
            AMD_COMGR_STATUS_SUCCESS) {
            info->kernels.clear();  // not read: the runtime says what it makes of the image
        }
    } catch (const std::bad_alloc&) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "no host memory for a code object's kernels");
    }
    return HAL_SUCCESS;
}

halError HipApi::describeKernel(const ModuleInfo& module, const char* name, Function /*function*/,
                                KernelInfo* info) noexcept {
    const auto kernel = module.kernels.find(name);
    if (kernel == module.kernels.end()) return HAL_SUCCESS;
    const std::vector<KernelParameter>& parameters = kernel->second;
    const auto count = static_cast<uint32_t>(parameters.size());
    if (halError error = info->parameters.declare(count)) return error;
    for (uint32_t i = 0; i < count; ++i) *info->parameters.size(i) = parameters[i].size;
    return HAL_SUCCESS;
}

halError HipApi::instantiate(GraphExec* exec, Graph graph) noexcept {
    return gpu::call<HipApi>(symbols.graphInstantiate, exec, graph, 0ull);
}

}  // namespace polyhal::hip
