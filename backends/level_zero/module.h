// Modules (SPIR-V or native binaries) and kernel launches.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_MODULE_H_
#define POLYHAL_BACKENDS_LEVEL_ZERO_MODULE_H_

#include <level_zero/ze_api.h>
#include <polyhal/plugin.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

struct halPluginFunction_t {
    ze_kernel_handle_t kernel = nullptr;
    const char* name = nullptr;   // the module's key for it
    uint32_t numParameters = 0;   // as the kernel declares them
    // A kernel's group size and arguments are state of the kernel object that the launch
    // reads when it is appended: setting them and appending must not interleave with another
    // launch of the same function.
    std::mutex launchMutex;
};

struct halPluginModule_t {
    halPluginDevice_t* device = nullptr;
    ze_module_handle_t module = nullptr;
    // Functions by name, created on first request and destroyed with the module.
    std::mutex functionsMutex;
    std::map<std::string, std::unique_ptr<halPluginFunction_t>> functions;
};

namespace polyhal::level_zero {

halError moduleLoadData(halPluginDevice device, const void* image, size_t size,
                        halPluginModule* module);
halError moduleUnload(halPluginModule module);
halError moduleGetFunction(halPluginModule module, const char* name, halPluginFunction* function);
// Dynamic shared memory: OpenCL C and SPIR-V have no "extern __shared__" array; a kernel that
// takes dynamicSharedBytes > 0 declares one more parameter after its numArgs arguments, a
// `local` pointer, which is bound to dynamicSharedBytes of shared local memory.
halError launchKernel(halPluginStream stream, halPluginFunction function, halDim3 grid,
                      halDim3 block, size_t dynamicSharedBytes, const halKernelArg* args,
                      uint32_t numArgs);

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_MODULE_H_
