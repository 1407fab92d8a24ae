// Modules are OpenCL programs built from OpenCL C source or SPIR-V; functions are kernels.
#include "module.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "device.hpp"
#include "entries.hpp"
#include "error.hpp"

namespace polyhal::opencl {

namespace {

constexpr uint32_t kSpirvMagic = 0x07230203;

bool isSpirv(const void* image, size_t size) {
    if (size < sizeof(uint32_t)) return false;
    uint32_t word = 0;
    std::memcpy(&word, image, sizeof word);
    return word == kSpirvMagic || word == __builtin_bswap32(kSpirvMagic);  // either byte order
}

halError createFromSpirv(halPluginDevice device, const void* image, size_t size,
                         cl_program* program) {
    if (!device->acceptsSpirv) {
        return plugin::fail(HAL_ERROR_INVALID_IMAGE,
                            "the image is SPIR-V, which OpenCL device '%s' does not accept (its "
                            "CL_DEVICE_IL_VERSION names no SPIR-V); load OpenCL C source instead",
                            device->name.c_str());
    }
    cl_int error = CL_SUCCESS;
    *program = clCreateProgramWithIL(device->context, image, size, &error);
    if (*program != nullptr) return HAL_SUCCESS;
    return error == CL_INVALID_VALUE
               ? failCall(HAL_ERROR_INVALID_IMAGE, "clCreateProgramWithIL", error)
               : checkCall(error, "clCreateProgramWithIL");
}

halError createFromSource(halPluginDevice device, const void* image, size_t size,
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
    if (!device->compiler) {
        return plugin::fail(HAL_ERROR_INVALID_IMAGE,
                            "OpenCL device '%s' cannot compile OpenCL C source "
                            "(CL_DEVICE_COMPILER_AVAILABLE is false)",
                            device->name.c_str());
    }
    cl_int error = CL_SUCCESS;
    *program = clCreateProgramWithSource(device->context, 1, &text, &length, &error);
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

halError build(halPluginDevice device, cl_program program) {
    const cl_int error = clBuildProgram(program, 1, &device->id, "", nullptr, nullptr);
    if (error == CL_BUILD_PROGRAM_FAILURE || error == CL_INVALID_BINARY) {
        return plugin::fail(HAL_ERROR_INVALID_IMAGE,
                            "clBuildProgram: %s (%d) on OpenCL device '%s'; build log:\n%s",
                            errorName(error), error, device->name.c_str(),
                            buildLog(program, device->id).c_str());
    }
    return checkCall(error, "clBuildProgram");
}

}  // namespace

halError moduleLoadData(halPluginDevice device, const void* image, size_t size,
                        halPluginModule* module) {
    return guard("moduleLoadData", [&] {
        cl_program program = nullptr;
        halError result = isSpirv(image, size) ? createFromSpirv(device, image, size, &program)
                                               : createFromSource(device, image, size, &program);
        if (result == HAL_SUCCESS) result = build(device, program);
        if (result == HAL_SUCCESS) {
            try {
                *module = new halPluginModule_t(device, program);
                return HAL_SUCCESS;
            } catch (...) {
                clReleaseProgram(program);
                throw;
            }
        }
        if (program != nullptr) clReleaseProgram(program);
        return result;
    });
}

halError moduleUnload(halPluginModule module) {
    delete module;
    return HAL_SUCCESS;
}

halError moduleGetFunction(halPluginModule module, const char* name, halPluginFunction* function) {
    return guard("moduleGetFunction", [&] {
        std::lock_guard lock(module->functionsMutex);
        if (auto found = module->functions.find(name); found != module->functions.end()) {
            *function = found->second.get();
            return HAL_SUCCESS;
        }
        cl_int error = CL_SUCCESS;
        cl_kernel kernel = clCreateKernel(module->program, name, &error);
        if (kernel == nullptr) {
            if (error != CL_INVALID_KERNEL_NAME) return checkCall(error, "clCreateKernel");
            return plugin::fail(HAL_ERROR_NOT_FOUND,
                                "no kernel named '%s' in the module (clCreateKernel: %s (%d))",
                                name, errorName(error), error);
        }
        cl_uint numArgs = 0;
        error = clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof numArgs, &numArgs, nullptr);
        if (error != CL_SUCCESS) {
            clReleaseKernel(kernel);
            return checkCall(error, "clGetKernelInfo(CL_KERNEL_NUM_ARGS)");
        }
        std::unique_ptr<halPluginFunction_t> created;
        try {
            created = std::make_unique<halPluginFunction_t>(kernel, name, numArgs);
        } catch (...) {
            clReleaseKernel(kernel);
            throw;
        }
        halPluginFunction_t* raw = created.get();
        module->functions.emplace(name, std::move(created));
        *function = raw;
        return HAL_SUCCESS;
    });
}

}  // namespace polyhal::opencl
