// The out-of-line parts of CudaApi: what a CUDA launch checks and sets up before cuLaunchKernel,
// and the graph nodes (gpu_common/graph.hpp).
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <variant>

#include "api.hpp"
#include "gpu_common/engine/objects.hpp"
#include "plugin_common/elf_layout.hpp"

namespace polyhal::cuda {
namespace {

// A fatbin's header, which nvcc's fatbinary writes first: its entries follow, fatSize bytes.
struct FatbinHeader {
    uint32_t magic;
    uint16_t version;
    uint16_t headerSize;
    uint64_t fatSize;
};
constexpr uint32_t kFatbinMagic = 0xBA55ED50;

// The entries (each a PTX text or a cubin, for one architecture) follow one another, each its
// header then its payload, and fill the fatbin exactly. An entry's header starts with its kind
// (2 bytes), version (2), header size (4), padded payload size (8) and compressed payload size
// (4, 0 when not compressed), which is no more than the padded size.
const char* fatbinEntriesProblem(const unsigned char* image, uint64_t at, uint64_t end) noexcept {
    constexpr uint64_t kKnownHeaderBytes = 20;
    while (at < end) {
        if (end - at < kKnownHeaderBytes) {
            return "truncated fatbin (an entry's header runs past its end)";
        }
        uint32_t headerSize = 0;
        uint64_t paddedPayloadSize = 0;
        uint32_t compressedSize = 0;
        std::memcpy(&headerSize, image + at + 4, sizeof headerSize);
        std::memcpy(&paddedPayloadSize, image + at + 8, sizeof paddedPayloadSize);
        std::memcpy(&compressedSize, image + at + 16, sizeof compressedSize);
        uint64_t next = 0;
        if (headerSize < kKnownHeaderBytes ||
            __builtin_add_overflow(at, uint64_t{headerSize}, &next) ||
            __builtin_add_overflow(next, paddedPayloadSize, &next) || next > end) {
            return "truncated fatbin (an entry runs past its end)";
        }
        if (compressedSize > paddedPayloadSize) {
            return "malformed fatbin (an entry's compressed size exceeds its payload)";
        }
        at = next;
    }
    return nullptr;
}

// The number of parameters `function` declares, found by asking for each in turn.
CUresult countParameters(CUfunction function, uint32_t* count) noexcept {
    for (uint32_t index = 0;; ++index) {
        size_t offset = 0;
        size_t size = 0;
        const CUresult result =
            CudaApi::symbols.functionGetParameterInfo.address(function, index, &offset, &size);
        if (result == CUDA_ERROR_INVALID_VALUE) {  // no parameter `index`
            *count = index;
            return CUDA_SUCCESS;
        }
        if (result != CUDA_SUCCESS) return result;
    }
}

// The parameters' sizes, into `parameters`.
CUresult readParameters(CUfunction function, gpu::DeclaredParameters* parameters) noexcept {
    uint32_t count = 0;
    if (const CUresult result = countParameters(function, &count)) return result;
    if (parameters->declare(count) != HAL_SUCCESS) return CUDA_ERROR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < count; ++i) {
        size_t offset = 0;
        if (const CUresult result = CudaApi::symbols.functionGetParameterInfo.address(
                function, i, &offset, parameters->size(i))) {
            return result;
        }
    }
    return CUDA_SUCCESS;
}

}  // namespace

// Why cuModuleLoadDataEx, which takes no size, would read past the image: a cubin (an ELF image)
// whose tables or sections run past its end, a fatbin whose header says it is longer; anything
// else is PTX text, read up to its NUL. nullptr when nothing is wrong.
const char* CudaApi::imageProblem(const unsigned char* image, size_t size) noexcept {
    if (isElfImage(image, size)) return elfLayoutProblem(image, size);
    uint32_t magic = 0;
    if (size >= sizeof magic) std::memcpy(&magic, image, sizeof magic);
    if (magic != kFatbinMagic) return nullptr;
    FatbinHeader header{};
    if (size < sizeof header) return "truncated fatbin (shorter than its header)";
    std::memcpy(&header, image, sizeof header);
    uint64_t end = 0;
    if (header.headerSize < sizeof header ||
        __builtin_add_overflow(uint64_t{header.headerSize}, header.fatSize, &end) || end > size) {
        return "truncated fatbin (its header says it is longer than the image)";
    }
    return fatbinEntriesProblem(image, header.headerSize, end);
}

// The driver reads kernelParams[i] for each parameter the kernel declares, at its declared size,
// whatever the caller passed. cuFuncGetParamInfo (CUDA 12.4) says what the kernel declares;
// older drivers cannot say, and the arguments go unchecked there. Read once, here, with the
// function's shared memory attributes (allowDynamicSharedMemory).
halError CudaApi::describeKernel(const ModuleInfo& /*module*/, const char* /*name*/,
                                 CUfunction function, KernelInfo* info) noexcept {
    if (symbols.functionGetParameterInfo.address != nullptr) {
        info->parameterQuery = readParameters(function, &info->parameters);
        if (info->parameterQuery == CUDA_ERROR_OUT_OF_MEMORY) return HAL_ERROR_OUT_OF_MEMORY;
    }
    int staticBytes = 0;
    int dynamicLimit = 0;
    if (halError error = gpu::call<CudaApi>(symbols.functionGetAttribute, &staticBytes,
                                            CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function)) {
        return error;
    }
    if (halError error =
            gpu::call<CudaApi>(symbols.functionGetAttribute, &dynamicLimit,
                               CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, function)) {
        return error;
    }
    info->staticSharedBytes = static_cast<size_t>(staticBytes);
    info->dynamicSharedLimit.store(static_cast<size_t>(dynamicLimit), std::memory_order_relaxed);
    return HAL_SUCCESS;
}

halError CudaApi::checkArguments(const KernelInfo& info, const halKernelArg* args,
                                 uint32_t numArgs) noexcept {
    if (info.parameterQuery != CUDA_SUCCESS) {
        return gpu::failCall<CudaApi>(toHalError(info.parameterQuery), info.parameterQuery,
                                      symbols.functionGetParameterInfo.name);
    }
    return info.parameters.check(args, numArgs);
}

// A kernel's static and dynamic shared memory together get 48 KiB unless it opts in to more, up
// to the device's maximum (which deviceGetInfo reports): its default dynamic limit is 48 KiB
// less its static shared memory. The limit only ever rises, under a lock, so that a concurrent
// launch of the same kernel never sees it lowered below what it needs; nothing else changes it
// (polyhal hands out no CUfunction).
halError CudaApi::allowDynamicSharedMemory(CUfunction function, KernelInfo& info,
                                           size_t bytes) noexcept {
    constexpr size_t kDefaultLimit = 48 * 1024;
    if (bytes == 0 || bytes + info.staticSharedBytes <= kDefaultLimit ||
        bytes <= info.dynamicSharedLimit.load(std::memory_order_acquire)) {
        return HAL_SUCCESS;
    }
    static std::mutex raising;
    const std::lock_guard<std::mutex> lock(raising);
    if (bytes <= info.dynamicSharedLimit.load(std::memory_order_relaxed)) return HAL_SUCCESS;
    if (halError error = gpu::call<CudaApi>(symbols.functionSetAttribute, function,
                                            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                            static_cast<int>(bytes))) {
        return error;
    }
    info.dynamicSharedLimit.store(bytes, std::memory_order_release);
    return HAL_SUCCESS;
}

// CUDA C++ Programming Guide, "Function Parameters": kernel parameters are limited to 32,764
// bytes on devices of compute capability 7.0 and newer with CUDA 12.1 and newer drivers and
// toolkits, to 4 KiB otherwise (CUDA 12.1 release notes: "Kernel parameter limit increased from
// 4 KB to 32764 bytes"). A module built by an older toolkit keeps its own 4 KiB limit, which its
// kernels' declared parameters already respect.
uint64_t CudaApi::maxKernelArgumentBytes(CUdevice device) noexcept {
    constexpr uint64_t kClassicLimit = 4096;
    int version = 0;
    int major = 0;
    if (symbols.driverGetVersion.address(&version) != CUDA_SUCCESS ||
        symbols.deviceGetAttribute.address(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                           device) != CUDA_SUCCESS) {
        return kClassicLimit;
    }
    return version >= 12010 && major >= 7 ? 32764 : kClassicLimit;
}

// CU_POINTER_ATTRIBUTE_MEMORY_TYPE: pageable memory, which the driver does not know, is
// CUDA_ERROR_INVALID_VALUE; managed memory is CU_MEMORYTYPE_DEVICE, and graph nodes take it as the
// eager calls do.
halError CudaApi::memoryKind(const void* pointer, gpu::MemoryKind* kind) noexcept {
    unsigned type = 0;
    const CUresult result = symbols.pointerGetAttribute.address(
        &type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, toDevicePointer(pointer));
    if (result == CUDA_ERROR_INVALID_VALUE) {
        *kind = gpu::MemoryKind::kPageable;
        return HAL_SUCCESS;
    }
    if (result != CUDA_SUCCESS) {
        return gpu::failCall<CudaApi>(toHalError(result), result, symbols.pointerGetAttribute.name);
    }
    *kind = type == CU_MEMORYTYPE_DEVICE ? gpu::MemoryKind::kDevice
            : type == CU_MEMORYTYPE_HOST ? gpu::MemoryKind::kPageLocked
                                         : gpu::MemoryKind::kPageable;
    return HAL_SUCCESS;
}

namespace {

CUresult addMemsetNode(const gpu::NodeSite<CudaApi>& site, const gpu::MemsetRow& row,
                       CUgraphNode* node) noexcept {
    // dst, pitch (unused for one row), value, elementSize, width, height.
    const CUDA_MEMSET_NODE_PARAMS params{
        CudaApi::toDevicePointer(row.dst), 0, row.value, 1, row.bytes, 1};
    return CudaApi::symbols.graphAddMemsetNode.address(node, site.graph, site.after,
                                                       site.dependencies(), &params, site.context);
}

// A CUDA_MEMCPY3D of one slice.
CUresult addCopyNode(const gpu::NodeSite<CudaApi>& site, const gpu::CopyRows& rows,
                     CUgraphNode* node) noexcept {
    auto copy = describeCopy<CUDA_MEMCPY3D>(rows.dst, rows.dstPitch, rows.src, rows.srcPitch,
                                            rows.width, rows.height, rows.kind);
    // One slice of `height` rows: each side's slice height says so (cudaMemcpy3D's own 1-D copy
    // nodes set it too).
    copy.srcHeight = copy.dstHeight = rows.height;
    copy.Depth = 1;
    return CudaApi::symbols.graphAddMemcpyNode.address(node, site.graph, site.after,
                                                       site.dependencies(), &copy, site.context);
}

// The node runs in the function's context.
CUresult addKernelNode(const gpu::NodeSite<CudaApi>& site, const gpu::KernelLaunch& launch,
                       CUgraphNode* node) noexcept {
    // No `extra`; no CUkernel and no context: the function's.
    const CUDA_KERNEL_NODE_PARAMS kernel{gpu::nativeFunction<CudaApi>(launch.function),
                                         launch.grid.x,
                                         launch.grid.y,
                                         launch.grid.z,
                                         launch.block.x,
                                         launch.block.y,
                                         launch.block.z,
                                         static_cast<unsigned>(launch.dynamicSharedBytes),
                                         launch.params,
                                         nullptr,
                                         nullptr,
                                         nullptr};
    return CudaApi::symbols.graphAddKernelNode.address(node, site.graph, site.after,
                                                       site.dependencies(), &kernel);
}

}  // namespace

// A request as cuGraphAddMemsetNode, cuGraphAddMemcpyNode (a CUDA_MEMCPY3D of one slice) or
// cuGraphAddKernelNode (v2, or v1 on drivers before 12.0).
halError CudaApi::addNode(const gpu::NodeSite<CudaApi>& site, const gpu::NodeRequest& request,
                          GraphNode* node) noexcept {
    if (const auto* row = std::get_if<gpu::MemsetRow>(&request)) {
        const CUresult result = addMemsetNode(site, *row, node);
        if (result == CUDA_SUCCESS) return HAL_SUCCESS;
        return gpu::failCall<CudaApi>(toHalError(result), result, symbols.graphAddMemsetNode.name);
    }
    if (const auto* rows = std::get_if<gpu::CopyRows>(&request)) {
        const CUresult result = addCopyNode(site, *rows, node);
        if (result == CUDA_SUCCESS) return HAL_SUCCESS;
        return gpu::failCall<CudaApi>(toHalError(result), result, symbols.graphAddMemcpyNode.name);
    }
    const CUresult result = addKernelNode(site, *std::get_if<gpu::KernelLaunch>(&request), node);
    if (result == CUDA_SUCCESS) return HAL_SUCCESS;
    return gpu::failCall<CudaApi>(toHalError(result), result, symbols.graphAddKernelNode.name);
}

halError CudaApi::instantiate(GraphExec* exec, Graph graph) noexcept {
    return gpu::call<CudaApi>(symbols.graphInstantiate, exec, graph, 0ull);
}

}  // namespace polyhal::cuda
