// The backend's module (a built cl_program) and function (a cl_kernel).
#ifndef POLYHAL_OPENCL_MODULE_HPP_
#define POLYHAL_OPENCL_MODULE_HPP_

#include <CL/cl.h>
#include <polyhal/plugin.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

struct halPluginFunction_t {
    halPluginFunction_t(cl_kernel kernel, std::string name, cl_uint numArgs)
        : kernel(kernel), name(std::move(name)), numArgs(numArgs) {}
    ~halPluginFunction_t() { clReleaseKernel(kernel); }
    halPluginFunction_t(const halPluginFunction_t&) = delete;
    halPluginFunction_t& operator=(const halPluginFunction_t&) = delete;

    cl_kernel kernel;
    const std::string name;
    const cl_uint numArgs;  // CL_KERNEL_NUM_ARGS
    // A cl_kernel holds its arguments between clSetKernelArg and the enqueue that reads them,
    // so launches of one function from several threads take turns.
    std::mutex launchMutex;
};

struct halPluginModule_t {
    halPluginModule_t(halPluginDevice device, cl_program program)
        : device(device), program(program) {}
    ~halPluginModule_t() { clReleaseProgram(program); }  // kernels hold their own reference
    halPluginModule_t(const halPluginModule_t&) = delete;
    halPluginModule_t& operator=(const halPluginModule_t&) = delete;

    halPluginDevice device;
    cl_program program;
    // One function per name, created on first lookup and kept until the module is unloaded.
    std::mutex functionsMutex;
    std::unordered_map<std::string, std::unique_ptr<halPluginFunction_t>> functions;
};

#endif  // POLYHAL_OPENCL_MODULE_HPP_
