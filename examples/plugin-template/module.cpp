// Modules and kernels: the template device runs tasm kernels (engine/kernel_image.hpp), its own
// image kind, as a GPU runs its own binaries. With a real runtime, moduleLoadData would be
// cuModuleLoadData or zeModuleCreate, moduleGetFunction cuModuleGetFunction, and launchKernel
// cuLaunchKernel; the engine's parser and interpreter would go away.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "device.hpp"
#include "engine/kernel_image.hpp"
#include "engine/kernel_run.hpp"
#include "entries.hpp"
#include "stream.hpp"

namespace polyhal_template {

namespace {

struct Module {
    using Handle = halPluginModule;
    KernelImage kernels;
};

// "fill_u32(ptr, u32, u32)", for messages.
std::string signatureOf(const Kernel& kernel) {
    std::string signature = kernel.name + "(";
    for (size_t i = 0; i < kernel.arguments.size(); ++i) {
        signature += (i > 0 ? ", " : "") + std::string(argumentTypeName(kernel.arguments[i]));
    }
    return signature + ")";
}

}  // namespace

// The image is untrusted and only borrowed: the parser checks every line and keeps copies.
halError moduleLoadData(halPluginDevice /*device*/, const void* image, size_t size,
                        halPluginModule* out) {
    auto module = std::make_unique<Module>();
    std::string problem;
    if (!parseKernelImage(static_cast<const char*>(image), size, module->kernels, problem)) {
        return fail(HAL_ERROR_INVALID_IMAGE, "%s", problem.c_str());
    }
    polyhal::plugin::log(HAL_LOG_DEBUG, "template: loaded a module of %zu kernel(s)",
                         module->kernels.size());
    *out = toHandle(module.release());
    return HAL_SUCCESS;
}

// The core has waited for every launch from the module.
halError moduleUnload(halPluginModule module) {
    delete &fromHandle<Module>(module);
    return HAL_SUCCESS;
}

halError moduleGetFunction(halPluginModule handle, const char* name, halPluginFunction* function) {
    for (const auto& kernel : fromHandle<Module>(handle).kernels) {
        if (kernel->name == name) {
            *function = toHandle(kernel.get());
            return HAL_SUCCESS;
        }
    }
    return fail(HAL_ERROR_NOT_FOUND, "the module has no kernel named '%s'", name);
}

// The core has checked the launch against the device's limits. The kernel's signature is checked
// here, so a wrong argument is an error now rather than a fault later; the arguments are copied,
// as the caller's may change once the launch returns.
halError launchKernel(halPluginStream streamHandle, halPluginFunction function, halDim3 grid,
                      halDim3 block, size_t dynamicSharedBytes, const halKernelArg* args,
                      uint32_t numArgs) {
    Kernel& kernel = fromHandle<Kernel>(function);
    if (numArgs != kernel.arguments.size()) {
        return fail(HAL_ERROR_INVALID_VALUE, "%s takes %zu argument(s), not %u",
                    signatureOf(kernel).c_str(), kernel.arguments.size(), numArgs);
    }
    Launch launch{grid, block, dynamicSharedBytes, std::vector<uint64_t>(numArgs)};
    for (uint32_t i = 0; i < numArgs; ++i) {
        const size_t size = argumentSize(kernel.arguments[i]);
        if (args[i].size != size) {
            return fail(HAL_ERROR_INVALID_VALUE, "argument %u of %s is %zu bytes, not %zu", i,
                        signatureOf(kernel).c_str(), size, args[i].size);
        }
        std::memcpy(&launch.arguments[i], args[i].value, size);  // little-endian, zero-extended
    }
    Stream& stream = fromHandle<Stream>(streamHandle);
    Device& device = *stream.device;      // outlives the stream's worker (deviceClose waits)
    CommandQueue& queue = *stream.queue;  // alive while it runs its commands
    std::shared_ptr<const Kernel> shared = kernel.shared_from_this();
    queue.submit([&device, &queue, kernel = std::move(shared), launch = std::move(launch)] {
        std::string fault = runKernel(*kernel, launch, [&device](uint64_t address, uint64_t bytes) {
            return inDeviceMemory(device, address, bytes);
        });
        if (!fault.empty()) queue.fail(std::move(fault));
    });
    return HAL_SUCCESS;
}

}  // namespace polyhal_template
