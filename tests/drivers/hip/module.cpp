// Modules and kernels: code objects are recorded, kernels run as their host builds.
#include <cstring>

#include "runtime.hpp"

using namespace polyhal::doubles;
using namespace polyhal::doubles::hip;

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
    Device& device = *g_devices[static_cast<size_t>(stream->device)];
    if (hipError_t sticky = device.sticky.load()) return sticky;
    if (extra != nullptr) return hipErrorNotSupported;
    if (gridX == 0 || gridY == 0 || gridZ == 0 || blockX == 0 || blockY == 0 || blockZ == 0 ||
        uint64_t{blockX} * blockY * blockZ > kMaxThreadsPerBlock ||
        sharedBytes > static_cast<unsigned>(kMaxSharedMemory)) {
        return hipErrorInvalidValue;
    }
    const HostKernel* kernel = function->host;
    if (kernel == nullptr) return hipErrorNotSupported;
    std::vector<std::vector<unsigned char>> arguments;
    const auto reaches = [&device, own = stream->device](int other) {
        std::lock_guard<std::mutex> lock(device.mutex);
        return other == own || device.peers.count(other) > 0;
    };
    const std::string problem =
        polyhal::doubles::packArguments(*kernel, params, g_memory, reaches, &arguments);
    if (!problem.empty()) breach(kVendor, "hipModuleLaunchKernel: %s", problem.c_str());
    const halDim3 grid{gridX, gridY, gridZ};
    const halDim3 block{blockX, blockY, blockZ};
    stream->timeline.submit([=, &device, arguments = std::move(arguments)] {
        if (polyhal::doubles::runHostKernel(*kernel, grid, block, sharedBytes, arguments) != 0) {
            device.sticky.store(hipErrorLaunchFailure);
        }
    });
    return hipSuccess;
}

}  // extern "C"
