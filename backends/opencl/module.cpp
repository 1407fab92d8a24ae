// Modules are OpenCL programs built from OpenCL C source or SPIR-V; functions are kernels, which
// launchKernel runs as an NDRange.
#include "module.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "device.hpp"
#include "engine/svm_registry.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "stream.hpp"

namespace polyhal::opencl {

namespace {

constexpr uint32_t kSpirvMagic = 0x07230203;

bool isSpirv(const void* image, size_t size) {
    if (size < sizeof(uint32_t)) return false;
    uint32_t word = 0;
    std::memcpy(&word, image, sizeof word);
    return word == kSpirvMagic || word == __builtin_bswap32(kSpirvMagic);  // either byte order
}

halError createFromSpirv(const Device& device, const void* image, size_t size,
                         cl_program* program) {
    if (!device.acceptsSpirv()) {
        return plugin::fail(HAL_ERROR_INVALID_IMAGE,
                            "the image is SPIR-V, which OpenCL device '%s' does not accept (its "
                            "CL_DEVICE_IL_VERSION names no SPIR-V); load OpenCL C source instead",
                            device.name().c_str());
    }
    cl_int error = CL_SUCCESS;
    *program = clCreateProgramWithIL(device.context(), image, size, &error);
    if (*program != nullptr) return HAL_SUCCESS;
    return error == CL_INVALID_VALUE
               ? failCall(HAL_ERROR_INVALID_IMAGE, "clCreateProgramWithIL", error)
               : checkCall(error, "clCreateProgramWithIL");
}

halError createFromSource(const Device& device, const void* image, size_t size,
                          cl_program* program) {
    const char* text = static_cast<const char*>(image);
    // The text ends at the first NUL; only more NULs may follow (a terminator counted in size).
    size_t length = static_cast<size_t>(std::find(text, text + size, '\0') - text);
    if (std::any_of(text + length, text + size, [](char c) { return c != '\0'; })) {
        return plugin::fail(HAL_ERROR_INVALID_IMAGE,
                            "the image is neither SPIR-V (magic number 0x07230203) nor OpenCL C "
                            "source text: it has a NUL byte at offset %zu",
                            length);
    }
    if (length == 0) return plugin::fail(HAL_ERROR_INVALID_IMAGE, "the OpenCL C source is empty");
    if (!device.compiler()) {
        return plugin::fail(HAL_ERROR_INVALID_IMAGE,
                            "OpenCL device '%s' cannot compile OpenCL C source "
                            "(CL_DEVICE_COMPILER_AVAILABLE is false)",
                            device.name().c_str());
    }
    cl_int error = CL_SUCCESS;
    *program = clCreateProgramWithSource(device.context(), 1, &text, &length, &error);
    return *program != nullptr ? HAL_SUCCESS : checkCall(error, "clCreateProgramWithSource");
}

std::string buildLog(cl_program program, cl_device_id device) {
    size_t size = 0;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
            CL_SUCCESS ||
        size == 0) {
        return "(no build log)";
    }
    std::string log(size, '\0');
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    log.erase(log.find_last_not_of(" \n\r\t\0", std::string::npos, 5) + 1);
    return log;
}

halError build(const Device& device, cl_program program) {
    const cl_device_id id = device.id();
    const cl_int error = clBuildProgram(program, 1, &id, "", nullptr, nullptr);
    if (error == CL_BUILD_PROGRAM_FAILURE || error == CL_INVALID_BINARY) {
        return plugin::fail(HAL_ERROR_INVALID_IMAGE,
                            "clBuildProgram: %s (%d) on OpenCL device '%s'; build log:\n%s",
                            errorName(error), error, device.name().c_str(),
                            buildLog(program, id).c_str());
    }
    return checkCall(error, "clBuildProgram");
}

}  // namespace

halError Module::function(const char* name, Function** function) {
    std::lock_guard lock(functionsMutex_);
    if (auto found = functions_.find(name); found != functions_.end()) {
        *function = found->second.get();
        return HAL_SUCCESS;
    }
    cl_int error = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program_, name, &error);
    if (kernel == nullptr) {
        if (error != CL_INVALID_KERNEL_NAME) return checkCall(error, "clCreateKernel");
        return plugin::fail(HAL_ERROR_NOT_FOUND,
                            "no kernel named '%s' in the module (clCreateKernel: %s (%d))", name,
                            errorName(error), error);
    }
    cl_uint numArgs = 0;
    error = clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof numArgs, &numArgs, nullptr);
    if (error != CL_SUCCESS) {
        clReleaseKernel(kernel);
        return checkCall(error, "clGetKernelInfo(CL_KERNEL_NUM_ARGS)");
    }
    std::unique_ptr<Function> created;
    try {
        created = std::make_unique<Function>(kernel, name, numArgs);
    } catch (...) {
        clReleaseKernel(kernel);
        throw;
    }
    Function* raw = created.get();
    functions_.emplace(name, std::move(created));
    *function = raw;
    return HAL_SUCCESS;
}

halError moduleLoadData(halPluginDevice device, const void* image, size_t size,
                        halPluginModule* module) {
    Device& owner = plugin::fromHandle<Device>(device);
    cl_program program = nullptr;
    halError result = isSpirv(image, size) ? createFromSpirv(owner, image, size, &program)
                                           : createFromSource(owner, image, size, &program);
    if (result == HAL_SUCCESS) result = build(owner, program);
    if (result == HAL_SUCCESS) {
        try {
            *module = plugin::toHandle(new Module(owner, program));
            return HAL_SUCCESS;
        } catch (...) {
            clReleaseProgram(program);
            throw;
        }
    }
    if (program != nullptr) clReleaseProgram(program);
    return result;
}

halError moduleUnload(halPluginModule module) {
    return plugin::destroyHandle<Module>(module);
}

halError moduleGetFunction(halPluginModule module, const char* name, halPluginFunction* function) {
    Function* found = nullptr;
    const halError result = plugin::fromHandle<Module>(module).function(name, &found);
    if (result == HAL_SUCCESS) *function = plugin::toHandle(found);
    return result;
}

// ---- launchKernel: polyhal's untyped arguments and grid/block launch mapped onto an NDRange.
//
// Arguments arrive as bytes without their parameter types:
// - an argument of pointer size whose value points into SVM memory of the device's context
//   (memAllocDevice, or memAllocHost on devices with fine-grain SVM) is passed with
//   clSetKernelArgSVMPointer: it feeds a __global or __constant pointer parameter;
// - every other argument is passed by value with clSetKernelArg.
//
// Dynamic shared memory: with dynamicSharedBytes > 0, the kernel's LAST parameter must be a
// __local pointer. It receives dynamicSharedBytes bytes of local memory and is not part of
// `args`, e.g. `kernel void reduce(global const float* in, global float* out, uint n,
// local float* scratch)` is launched with the three arguments in, out and n.
//
// Geometry: a block is a work-group, so the global size is grid * block in each dimension and the
// local size is block; get_group_id() is the block index and get_local_id() the thread index.

namespace {

halError setArgument(const Function& function, const SvmRegistry& svm, cl_uint index,
                     const halKernelArg& arg, cl_int* clError) {
    const void* pointer = nullptr;
    if (arg.size == sizeof pointer) std::memcpy(&pointer, arg.value, sizeof pointer);
    const bool svmPointer =
        arg.size == sizeof pointer && svm.contains(pointer, &function.lastSvmHit());
    const cl_int error = svmPointer ? clSetKernelArgSVMPointer(function.kernel(), index, pointer)
                                    : clSetKernelArg(function.kernel(), index, arg.size, arg.value);
    if (error == CL_SUCCESS) return HAL_SUCCESS;
    *clError = error;
    const halError code = error == CL_OUT_OF_HOST_MEMORY || error == CL_OUT_OF_RESOURCES
                              ? HAL_ERROR_OUT_OF_MEMORY
                              : HAL_ERROR_INVALID_VALUE;
    return plugin::fail(code, "argument %u (%zu bytes) of kernel '%s': %s: %s (%d)", index,
                        arg.size, function.name().c_str(),
                        svmPointer ? "clSetKernelArgSVMPointer" : "clSetKernelArg",
                        errorName(error), error);
}

halError setDynamicShared(const Function& function, cl_uint index, size_t bytes, cl_int* clError) {
    const cl_int error = clSetKernelArg(function.kernel(), index, bytes, nullptr);
    if (error == CL_SUCCESS) return HAL_SUCCESS;
    *clError = error;
    return plugin::fail(HAL_ERROR_INVALID_VALUE,
                        "kernel '%s' cannot take %zu bytes of dynamic shared memory: its last "
                        "parameter must be a __local pointer (clSetKernelArg: %s (%d))",
                        function.name().c_str(), bytes, errorName(error), error);
}

// Errors of clEnqueueNDRangeKernel that mean the launch did not fit the kernel or the device.
bool isLaunchShapeError(cl_int error) {
    return error == CL_INVALID_WORK_GROUP_SIZE || error == CL_INVALID_WORK_ITEM_SIZE ||
           error == CL_INVALID_GLOBAL_WORK_SIZE || error == CL_INVALID_KERNEL_ARGS;
}

}  // namespace

halError checkArgumentCount(const Function& function, uint32_t numArgs, size_t dynamicSharedBytes) {
    const bool dynamicShared = dynamicSharedBytes > 0;
    if (numArgs + (dynamicShared ? 1u : 0u) == function.numArgs()) return HAL_SUCCESS;
    return plugin::fail(HAL_ERROR_INVALID_VALUE,
                        "kernel '%s' has %u parameters; the launch passes %u argument(s)%s",
                        function.name().c_str(), function.numArgs(), numArgs,
                        dynamicShared ? " and the __local pointer for dynamic shared memory" : "");
}

halError setLaunchArguments(const Function& function, const SvmRegistry& svm,
                            const halKernelArg* args, uint32_t numArgs, size_t dynamicSharedBytes,
                            cl_int* clError) {
    cl_int unused = CL_SUCCESS;
    cl_int* error = clError != nullptr ? clError : &unused;
    for (uint32_t i = 0; i < numArgs; ++i) {
        if (halError failed = setArgument(function, svm, i, args[i], error)) return failed;
    }
    if (dynamicSharedBytes > 0) {
        return setDynamicShared(function, numArgs, dynamicSharedBytes, error);
    }
    return HAL_SUCCESS;
}

cl_int enqueueKernel(cl_command_queue queue, const Function& function, halDim3 grid, halDim3 block,
                     cl_uint numWaits, const cl_event* waits, cl_event* event) {
    const size_t global[3] = {size_t{grid.x} * block.x, size_t{grid.y} * block.y,
                              size_t{grid.z} * block.z};
    const size_t local[3] = {block.x, block.y, block.z};
    return clEnqueueNDRangeKernel(queue, function.kernel(), 3, nullptr, global, local, numWaits,
                                  waits, event);
}

halError launchKernel(halPluginStream stream, halPluginFunction function, halDim3 grid,
                      halDim3 block, size_t dynamicSharedBytes, const halKernelArg* args,
                      uint32_t numArgs) {
    Stream& self = plugin::fromHandle<Stream>(stream);
    const Function& kernel = plugin::fromHandle<Function>(function);
    if (halError error = checkArgumentCount(kernel, numArgs, dynamicSharedBytes)) return error;
    std::lock_guard lock(kernel.launchMutex());
    if (halError error = setLaunchArguments(kernel, self.device().platform().svm, args, numArgs,
                                            dynamicSharedBytes)) {
        return error;
    }
    return self.submit([&](cl_event* last) {
        const cl_int error = enqueueKernel(self.queue(), kernel, grid, block, 0, nullptr, last);
        if (isLaunchShapeError(error)) {
            return plugin::fail(HAL_ERROR_INVALID_VALUE,
                                "kernel '%s' with blocks of %ux%ux%u: clEnqueueNDRangeKernel: "
                                "%s (%d)",
                                kernel.name().c_str(), block.x, block.y, block.z, errorName(error),
                                error);
        }
        return checkCall(error, "clEnqueueNDRangeKernel");
    });
}

}  // namespace polyhal::opencl
