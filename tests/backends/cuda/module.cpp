// Modules and kernels: images are recorded, kernels run as their host builds.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "driver.hpp"

using namespace polyhal::doubles;
using namespace polyhal::doubles::cuda;

namespace polyhal::doubles::cuda {

CUresult prepareLaunch(const char* caller, CUfunction function, halDim3 grid, halDim3 block,
                       unsigned sharedBytes, void** params, void** extra,
                       std::shared_ptr<const KernelRun>* prepared) {
    if (extra != nullptr) return CUDA_ERROR_NOT_SUPPORTED;
    if (!validLaunchShape(grid, block, kMaxThreadsPerBlock)) return CUDA_ERROR_INVALID_VALUE;
    if (sharedBytes > static_cast<unsigned>(function->maxDynamicShared)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    const HostKernel* kernel = function->host;
    if (kernel == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
    CUctx_st* context = function->module->context;
    auto run = std::make_shared<KernelRun>();
    const auto reaches = [context](int device) {
        if (device == context->device) return true;
        std::lock_guard<std::mutex> lock(context->mutex);
        for (const CUctx_st* peer : context->peers) {
            if (peer->device == device) return true;
        }
        return false;
    };
    const std::string problem = packArguments(*kernel, params, g_memory, reaches, &run->arguments);
    if (!problem.empty()) breach(kVendor, "%s: %s", caller, problem.c_str());
    run->kernel = kernel;
    run->fault = [context] { context->sticky.store(CUDA_ERROR_LAUNCH_FAILED); };
    run->grid = grid;
    run->block = block;
    run->sharedBytes = sharedBytes;
    *prepared = std::move(run);
    return CUDA_SUCCESS;
}

}  // namespace polyhal::doubles::cuda

extern "C" {

// ---- Modules and kernels ----

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* handle, const void* image, unsigned int numOptions,
                                    CUjit_option* options, void** values) {
    ENTER();
    CUctx_st* context = requireCurrent(__func__);
    if (image == nullptr) return CUDA_ERROR_INVALID_VALUE;
    char* log = nullptr;
    size_t logSize = 0;
    for (unsigned i = 0; i < numOptions; ++i) {
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER) log = static_cast<char*>(values[i]);
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
            logSize = static_cast<size_t>(reinterpret_cast<uintptr_t>(values[i]));
        }
    }
    const auto* bytes = static_cast<const unsigned char*>(image);
    std::string recorded;
    if (std::memcmp(bytes, "\x50\xed\x55\xba", 4) == 0) {  // fatbin: header size + payload size
        uint16_t headerSize = 0;
        uint64_t payloadSize = 0;
        std::memcpy(&headerSize, bytes + 6, sizeof headerSize);
        std::memcpy(&payloadSize, bytes + 8, sizeof payloadSize);
        recorded.assign(reinterpret_cast<const char*>(bytes), headerSize + payloadSize);
    } else if (isElfImage(bytes)) {  // cubin
        recorded.assign(reinterpret_cast<const char*>(bytes), elfImageLength(bytes));
    } else {
        recorded = static_cast<const char*>(image);
        if (recorded.find(".version") == std::string::npos ||
            recorded.find(".target") == std::string::npos) {
            if (log != nullptr && logSize > 0) {
                std::snprintf(log, logSize,
                              "driver double: the image is not PTX, a cubin or a "
                              "fatbin");
            }
            return CUDA_ERROR_INVALID_IMAGE;
        }
    }
    auto* module = new CUmod_st{context, std::move(recorded), {}};
    g_handles.add(module, kModule);
    *handle = module;
    return CUDA_SUCCESS;
}

// CUDA unloads a module "from the current context": the module's own context must be current.
CUresult CUDAAPI cuModuleUnload(CUmodule module) {
    ENTER();
    requireLive(__func__, module, kModule);
    requireOwnContext(__func__, module->context, "the module");
    for (auto& [name, function] : module->functions) g_handles.remove(function.get());
    g_handles.remove(module);
    delete module;
    return CUDA_SUCCESS;
}

// Does the recorded image define kernel `name`? PTX names it after ".entry"; a binary image
// holds it as a NUL-terminated symbol name.
static bool imageDefines(const std::string& image, const char* name) {
    const std::string entry = std::string(".entry ") + name;
    for (size_t at = image.find(entry); at != std::string::npos; at = image.find(entry, at + 1)) {
        const char next = at + entry.size() < image.size() ? image[at + entry.size()] : '\0';
        if (next == '(' || next == ' ' || next == '\n' || next == '\r') return true;
    }
    const bool isPtx = image.find(".version") != std::string::npos;
    return !isPtx && image.find(std::string(name) + '\0') != std::string::npos;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* handle, CUmodule module, const char* name) {
    ENTER();
    requireLive(__func__, module, kModule);
    requireOwnContext(__func__, module->context, "the module");
    if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!imageDefines(module->image, name)) return CUDA_ERROR_NOT_FOUND;
    auto& function = module->functions[name];
    if (!function) {
        function = std::make_unique<CUfunc_st>();
        function->module = module;
        function->name = name;
        function->host = polyhal::doubles::findHostKernel(name);
        if (const char* bytes = std::getenv("POLYHAL_CUDA_DOUBLE_STATIC_SHARED")) {
            function->staticShared = std::atoi(bytes);
            function->maxDynamicShared = kDefaultMaxDynamicShared - function->staticShared;
        }
        g_handles.add(function.get(), kFunction);
    }
    *handle = function.get();
    return CUDA_SUCCESS;
}

#if POLYHAL_CUDA_DOUBLE_VERSION >= 12040
CUresult CUDAAPI cuFuncGetParamInfo(CUfunction function, size_t index, size_t* offset,
                                    size_t* size) {
    ENTER();
    requireLive(__func__, function, kFunction);
    if (function->host == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
    if (index >= function->host->parameters.size()) return CUDA_ERROR_INVALID_VALUE;
    if (offset != nullptr) *offset = function->host->offset(index);
    if (size != nullptr) *size = function->host->parameters[index].size;
    return CUDA_SUCCESS;
}
#endif

CUresult CUDAAPI cuFuncGetAttribute(int* value, CUfunction_attribute attribute,
                                    CUfunction function) {
    ENTER();
    requireLive(__func__, function, kFunction);
    requireOwnContext(__func__, function->module->context, "the function");
    switch (attribute) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        *value = function->maxDynamicShared;
        break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = function->staticShared; break;
    default: return CUDA_ERROR_NOT_SUPPORTED;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute,
                                    int value) {
    ENTER();
    requireLive(__func__, function, kFunction);
    requireOwnContext(__func__, function->module->context, "the function");
    if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (value < 0 || value + function->staticShared > kOptInMaxShared) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    function->maxDynamicShared = value;
    return CUDA_SUCCESS;
}

// Kernel arguments are read at their declared sizes from kernelParams[0..declared count), and
// copied at the call. A pointer parameter must hold memory of the launch's device (or
// page-locked host memory, or null).
CUresult CUDAAPI cuLaunchKernel(CUfunction function, unsigned gridX, unsigned gridY, unsigned gridZ,
                                unsigned blockX, unsigned blockY, unsigned blockZ,
                                unsigned sharedBytes, CUstream streamHandle, void** params,
                                void** extra) {
    ENTER();
    requireLive(__func__, function, kFunction);
    CUstream_st* stream = requireStream(__func__, streamHandle);
    requireOwnContext(__func__, function->module->context, "the function");
    if (CUresult sticky = stream->context->sticky.load()) return sticky;
    std::shared_ptr<const KernelRun> run;
    if (CUresult prepared =
            prepareLaunch(__func__, function, {gridX, gridY, gridZ}, {blockX, blockY, blockZ},
                          sharedBytes, params, extra, &run)) {
        return prepared;
    }
    stream->timeline.submit([run] { run->execute(); });
    return CUDA_SUCCESS;
}

}  // extern "C"
