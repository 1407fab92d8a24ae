// The backend's module (a built cl_program) and function (a cl_kernel).
#ifndef POLYHAL_BACKENDS_OPENCL_MODULE_HPP_
#define POLYHAL_BACKENDS_OPENCL_MODULE_HPP_

#include <CL/cl.h>
#include <polyhal/plugin.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "engine/svm_registry.hpp"

namespace polyhal::opencl {

class Device;

// What halPluginFunction points to.
class Function {
  public:
    using Handle = halPluginFunction;

    // Takes over `kernel`, which has `numArgs` parameters (CL_KERNEL_NUM_ARGS).
    Function(cl_kernel kernel, std::string name, cl_uint numArgs)
        : kernel_(kernel), name_(std::move(name)), numArgs_(numArgs) {}
    ~Function() { clReleaseKernel(kernel_); }
    Function(const Function&) = delete;
    Function& operator=(const Function&) = delete;

    cl_kernel kernel() const { return kernel_; }
    const std::string& name() const { return name_; }
    cl_uint numArgs() const { return numArgs_; }

    // A cl_kernel holds its arguments between clSetKernelArg and the enqueue that reads them,
    // so launches of one function from several threads take turns under this lock.
    std::mutex& launchMutex() const { return launchMutex_; }
    // The SVM allocation an argument of this kernel pointed into last; under launchMutex().
    SvmRegistry::LastHit& lastSvmHit() const { return lastSvmHit_; }

  private:
    const cl_kernel kernel_;
    const std::string name_;
    const cl_uint numArgs_;
    mutable std::mutex launchMutex_;
    mutable SvmRegistry::LastHit lastSvmHit_;
};

// Checks that `numArgs` arguments, and the __local pointer of dynamic shared memory when
// dynamicSharedBytes > 0, match the kernel's parameters.
halError checkArgumentCount(const Function& function, uint32_t numArgs, size_t dynamicSharedBytes);
// Sets the launch's arguments on the function's cl_kernel, for the enqueue that follows; the
// caller holds function.launchMutex() until that enqueue. On failure, with `clError`, the
// failing clSetKernelArg's error goes there too.
halError setLaunchArguments(const Function& function, const SvmRegistry& svm,
                            const halKernelArg* args, uint32_t numArgs, size_t dynamicSharedBytes,
                            cl_int* clError = nullptr);
// clEnqueueNDRangeKernel of `function` in polyhal's geometry: blocks are work-groups.
cl_int enqueueKernel(cl_command_queue queue, const Function& function, halDim3 grid, halDim3 block,
                     cl_uint numWaits, const cl_event* waits, cl_event* event);

// What halPluginModule points to.
class Module {
  public:
    using Handle = halPluginModule;

    // Takes over `program`, built for `device`.
    Module(Device& device, cl_program program) : device_(device), program_(program) {}
    ~Module() { clReleaseProgram(program_); }  // kernels hold their own reference
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;

    Device& device() const { return device_; }
    cl_program program() const { return program_; }

    // The kernel `name` of the program, created on first lookup and kept until the module is
    // unloaded; HAL_ERROR_NOT_FOUND when the program has no kernel of that name. Throws
    // std::bad_alloc.
    halError function(const char* name, Function** function);

  private:
    Device& device_;
    const cl_program program_;
    std::mutex functionsMutex_;  // guards functions_
    std::unordered_map<std::string, std::unique_ptr<Function>> functions_;
};

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_MODULE_HPP_
