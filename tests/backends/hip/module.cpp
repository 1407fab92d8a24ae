// Modules and kernels: code objects are read as the runtime reads them (their kernels and the
// parameters each declares), kernels run as their host builds.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string_view>

#include "runtime.hpp"

using namespace polyhal::doubles;
using namespace polyhal::doubles::hip;

namespace polyhal::doubles::hip {

namespace {

// The double's devices are MI200s, with the features their code objects may name.
constexpr std::string_view kDeviceProcessor = "gfx90a";
constexpr std::string_view kDeviceFeatures[] = {"sramecc+", "xnack-"};

// comgr, which the runtime reads code objects with. The double cannot read one without it.
const polyhal::hip::ComgrSymbols& codeObjectManager() {
    static const polyhal::hip::ComgrSymbols symbols = [] {
        static DynamicLibrary library;
        polyhal::hip::ComgrSymbols resolved;
        std::string error;
        library = DynamicLibrary::openFirst(
            polyhal::hip::kComgrLibraries,
            sizeof polyhal::hip::kComgrLibraries / sizeof *polyhal::hip::kComgrLibraries, &error);
        const char* missing = library ? resolved.resolve(library) : nullptr;
        if (!library || missing != nullptr) {
            std::fprintf(stderr, "HIP double: comgr is needed to read code objects: %s\n",
                         missing != nullptr ? missing : error.c_str());
            std::abort();
        }
        library.keepLoaded();
        return resolved;
    }();
    return symbols;
}

// Whether a bundle entry's target ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-") runs on the device:
// its processor, and each feature it names, as the device has it (target ID compatibility).
bool runsOnDevice(std::string_view target) {
    const size_t processorStart = target.rfind("--");
    if (target.find("amdgcn-amd-amdhsa") == std::string_view::npos ||
        processorStart == std::string_view::npos) {
        return false;
    }
    std::string_view targetId = target.substr(processorStart + 2);
    size_t colon = targetId.find(':');
    if (targetId.substr(0, colon) != kDeviceProcessor) return false;
    while (colon != std::string_view::npos) {
        targetId.remove_prefix(colon + 1);
        colon = targetId.find(':');
        const std::string_view feature = targetId.substr(0, colon);
        if (std::find(std::begin(kDeviceFeatures), std::end(kDeviceFeatures), feature) ==
            std::end(kDeviceFeatures)) {
            return false;
        }
    }
    return true;
}

// A kernel fault ends the process: the HSA runtime reports it to the queue's callback, which clr
// registers for every queue and which prints the error and calls abort()
// (rocclr/device/rocm/rocdevice.cpp:2981-3004, callbackQueue). ROCm keeps no failure for the
// application to see.
[[noreturn]] void abortOnDeviceFault(const HostKernel& kernel) {
    std::fprintf(stderr,
                 "HIP double: kernel '%s' faulted; Callback: Queue aborting with error : "
                 "HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception. "
                 "code: 0x1016\n",
                 kernel.name);
    std::abort();
}

// The runtime's loader takes no size: the image is as long as its headers say (an ELF image's
// section header table ends it; a bundle's entries lie inside it).
hipError_t findCodeObject(const unsigned char* image, const unsigned char** codeObject,
                          size_t* size) {
    if (polyhal::hip::isOffloadBundle(image, SIZE_MAX)) {
        std::vector<polyhal::hip::BundleEntry> entries;
        if (polyhal::hip::readOffloadBundle(image, SIZE_MAX, &entries) != nullptr) {
            return hipErrorInvalidImage;
        }
        for (const auto& entry : entries) {
            if (!runsOnDevice(entry.target)) continue;
            *codeObject = entry.image;
            *size = entry.size;
            return hipSuccess;
        }
        return hipErrorNoBinaryForGpu;
    }
    if (!isElfImage(image)) return hipErrorInvalidImage;
    *codeObject = image;
    *size = elfImageLength(image);
    return hipSuccess;
}

// The host build of kernel `name` when its signature is the one the code object declares, kept
// for the process (a queued launch outlives its module), or nullptr.
const HostKernel* hostBuildOf(const std::string& name,
                              const std::vector<polyhal::hip::KernelParameter>& declared) {
    const HostKernel* host = findHostKernel(name.c_str());
    if (host == nullptr || host->parameters.size() != declared.size()) return nullptr;
    for (size_t i = 0; i < declared.size(); ++i) {
        if (host->parameters[i].size != declared[i].size ||
            host->parameters[i].isPointer != declared[i].isPointer) {
            return nullptr;
        }
    }
    return host;
}

}  // namespace

hipError_t prepareLaunch(const char* caller, hipFunction_t function, halDim3 grid, halDim3 block,
                         unsigned sharedBytes, void** params, void** extra,
                         std::shared_ptr<const KernelRun>* prepared) {
    if (extra != nullptr) return hipErrorNotSupported;
    if (!validLaunchShape(grid, block, kMaxThreadsPerBlock) ||
        sharedBytes > static_cast<unsigned>(kMaxSharedMemory)) {
        return hipErrorInvalidValue;
    }
    const HostKernel* kernel = function->host;
    if (kernel == nullptr) return hipErrorNotSupported;
    Device& device = *g_devices[static_cast<size_t>(function->module->device)];
    auto run = std::make_shared<KernelRun>();
    const auto reaches = [&device, own = function->module->device](int other) {
        std::lock_guard<std::mutex> lock(device.mutex);
        return other == own || device.peers.count(other) > 0;
    };
    const std::string problem = packArguments(*kernel, params, g_memory, reaches, &run->arguments);
    if (!problem.empty()) breach(kVendor, "%s: %s", caller, problem.c_str());
    run->kernel = kernel;
    run->fault = [kernel] { abortOnDeviceFault(*kernel); };
    run->grid = grid;
    run->block = block;
    run->sharedBytes = sharedBytes;
    *prepared = std::move(run);
    return hipSuccess;
}

}  // namespace polyhal::doubles::hip

extern "C" {

// ---- Modules and kernels ----

// A code object or a clang offload bundle of them, read as clr reads it (code_object.hpp): a
// bundle without a code object for the device's architecture is hipErrorNoBinaryForGpu, an image
// whose metadata comgr cannot read is hipErrorInvalidImage.
hipError_t hipModuleLoadDataEx(hipModule_t* handle, const void* image, unsigned int /*numOptions*/,
                               hipJitOption* /*options*/, void** /*values*/) {
    ENTER();
    if (handle == nullptr || image == nullptr) return hipErrorInvalidValue;
    const unsigned char* codeObject = nullptr;
    size_t size = 0;
    if (hipError_t found =
            findCodeObject(static_cast<const unsigned char*>(image), &codeObject, &size)) {
        return found;
    }
    auto module = std::make_unique<ihipModule_t>();
    module->device = currentDevice();
    if (polyhal::hip::readKernelParameters(codeObjectManager(), codeObject, size,
                                           &module->kernels) != AMD_COMGR_STATUS_SUCCESS) {
        return hipErrorInvalidImage;
    }
    g_handles.add(module.get(), kModule);
    *handle = module.release();
    return hipSuccess;
}

hipError_t hipModuleUnload(hipModule_t module) {
    ENTER();
    requireLive(__func__, module, kModule);
    for (auto& [name, function] : module->functions) g_handles.remove(function.get());
    g_handles.remove(module);
    delete module;
    return hipSuccess;
}

hipError_t hipModuleGetFunction(hipFunction_t* handle, hipModule_t module, const char* name) {
    ENTER();
    requireLive(__func__, module, kModule);
    if (name == nullptr) return hipErrorInvalidValue;
    const auto declared = module->kernels.find(name);
    if (declared == module->kernels.end()) return hipErrorNotFound;
    auto& function = module->functions[name];
    if (!function) {
        function = std::make_unique<ihipModuleSymbol_t>();
        function->module = module;
        function->name = name;
        function->host = hostBuildOf(name, declared->second);
        g_handles.add(function.get(), kFunction);
    }
    *handle = function.get();
    return hipSuccess;
}

hipError_t hipModuleLaunchKernel(hipFunction_t function, unsigned gridX, unsigned gridY,
                                 unsigned gridZ, unsigned blockX, unsigned blockY, unsigned blockZ,
                                 unsigned sharedBytes, hipStream_t stream, void** params,
                                 void** extra) {
    ENTER();
    requireLive(__func__, function, kFunction);
    requireLive(__func__, stream, kStream);
    requireSameDevice(__func__, function->module->device, "the kernel", stream->device,
                      "the stream");
    std::shared_ptr<const KernelRun> run;
    if (hipError_t prepared =
            prepareLaunch(__func__, function, {gridX, gridY, gridZ}, {blockX, blockY, blockZ},
                          sharedBytes, params, extra, &run)) {
        return prepared;
    }
    stream->timeline.submit([run] { run->execute(); });
    return hipSuccess;
}

}  // extern "C"
