// Modules (SPIR-V or native binaries) and kernel launches.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_MODULE_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_MODULE_HPP_

#include <level_zero/ze_api.h>
#include <polyhal/plugin.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace polyhal::level_zero {

class Function {
  public:
    using Handle = halPluginFunction;

    ze_kernel_handle_t kernel = nullptr;
    const char* name = nullptr;  // the module's key for it
    uint32_t numParameters = 0;  // as the kernel declares them
    // The most work-items one group of this kernel may have (its sub-groups times their size):
    // below the device's limit for a kernel built for a narrower SIMD width or with many
    // registers. 0 where the driver does not say.
    uint32_t maxGroupSize = 0;
    // A kernel's group size and arguments are state of the kernel object that the launch
    // reads when it is appended: setting them and appending must not interleave with another
    // launch of the same function.
    std::mutex launchMutex;
};

// Checks a launch of `function` and sets its group size and arguments on the kernel object, for
// the zeCommandListAppendLaunchKernel that follows. The caller holds function.launchMutex until
// that append.
halError setLaunchArguments(Function& function, halDim3 block, size_t dynamicSharedBytes,
                            const halKernelArg* args, uint32_t numArgs);

class Module {
  public:
    using Handle = halPluginModule;

    ze_module_handle_t module = nullptr;
    // Functions by name, created on first request and destroyed with the module.
    std::mutex functionsMutex;
    std::map<std::string, std::unique_ptr<Function>> functions;
};

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_MODULE_HPP_
