// Modules (SPIR-V or native binaries) and kernel launches.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_MODULE_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_MODULE_HPP_

#include <level_zero/ze_api.h>
#include <polyhal/hal.h>
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
    // A kernel's group size and arguments are state of the kernel object that the launch
    // reads when it is appended: setting them and appending must not interleave with another
    // launch of the same function.
    std::mutex launchMutex;
};

class Module {
  public:
    using Handle = halPluginModule;

    ze_module_handle_t module = nullptr;
    // Functions by name, created on first request and destroyed with the module.
    std::mutex functionsMutex;
    std::map<std::string, std::unique_ptr<Function>> functions;
};

// Sets `function`'s group size and arguments for the launch appended next (Level Zero reads them
// when the launch is appended, eager or into a graph's command list). The caller holds
// function.launchMutex until it has appended. The arguments must match the kernel's parameters,
// with the local pointer for dynamic shared memory last when dynamicSharedBytes > 0.
halError setLaunchArguments(Function& function, halDim3 block, size_t dynamicSharedBytes,
                            const halKernelArg* args, uint32_t numArgs);

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_MODULE_HPP_
