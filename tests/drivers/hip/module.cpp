// Modules and kernels: code objects are recorded, kernels run as their host builds.
#include <cstring>

#include "runtime.hpp"

using namespace polyhal::doubles;
using namespace polyhal::doubles::hip;

namespace polyhal::doubles::hip {

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
    run->fault = [&device] { device.sticky.store(hipErrorLaunchFailure); };
    run->grid = grid;
    run->block = block;
    run->sharedBytes = sharedBytes;
    *prepared = std::move(run);
    return hipSuccess;
}

}  // namespace polyhal::doubles::hip

extern "C" {

// ---- Modules and kernels ----

// A code object is an ELF image: accepted and recorded, its kernels looked up by symbol name.
hipError_t hipModuleLoadDataEx(hipModule_t* handle, const void* image, unsigned int /*numOptions*/,
                               hipJitOption* /*options*/, void** /*values*/) {
    ENTER();
    if (handle == nullptr || image == nullptr) return hipErrorInvalidValue;
    const auto* bytes = static_cast<const unsigned char*>(image);
    if (std::memcmp(bytes,
                    "\x7f"
                    "ELF",
                    4) != 0)
        return hipErrorInvalidImage;
    uint64_t sectionHeaders = 0;
    uint16_t entrySize = 0;
    uint16_t entries = 0;
    std::memcpy(&sectionHeaders, bytes + 0x28, sizeof sectionHeaders);
    std::memcpy(&entrySize, bytes + 0x3a, sizeof entrySize);
    std::memcpy(&entries, bytes + 0x3c, sizeof entries);
    auto* module = new ihipModule_t{
        currentDevice(),
        std::string(reinterpret_cast<const char*>(bytes), sectionHeaders + entrySize * entries),
        {}};
    g_handles.add(module, kModule);
    *handle = module;
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
    if (module->image.find(std::string(name) + '\0') == std::string::npos) return hipErrorNotFound;
    auto& function = module->functions[name];
    if (!function) {
        function = std::make_unique<ihipModuleSymbol_t>();
        function->module = module;
        function->name = name;
        function->host = polyhal::doubles::findHostKernel(name);
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
    if (hipError_t sticky = g_devices[static_cast<size_t>(stream->device)]->sticky.load()) {
        return sticky;
    }
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
