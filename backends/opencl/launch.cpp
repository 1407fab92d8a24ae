// launchKernel: polyhal's untyped arguments and grid/block launch mapped onto an NDRange.
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
#include <cstring>

#include "device.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "module.hpp"
#include "stream.hpp"

namespace polyhal::opencl {

namespace {

halError setArgument(halPluginFunction function, const SvmRegistry& svm, cl_uint index,
                     const halKernelArg& arg) {
    const void* pointer = nullptr;
    if (arg.size == sizeof pointer) std::memcpy(&pointer, arg.value, sizeof pointer);
    const bool svmPointer = arg.size == sizeof pointer && svm.contains(pointer);
    const cl_int error = svmPointer ? clSetKernelArgSVMPointer(function->kernel, index, pointer)
                                    : clSetKernelArg(function->kernel, index, arg.size, arg.value);
    if (error == CL_SUCCESS) return HAL_SUCCESS;
    const halError code = error == CL_OUT_OF_HOST_MEMORY || error == CL_OUT_OF_RESOURCES
                              ? HAL_ERROR_OUT_OF_MEMORY
                              : HAL_ERROR_INVALID_VALUE;
    return plugin::fail(code, "argument %u (%zu bytes) of kernel '%s': %s: %s (%d)", index,
                        arg.size, function->name.c_str(),
                        svmPointer ? "clSetKernelArgSVMPointer" : "clSetKernelArg",
                        errorName(error), error);
}

halError setDynamicShared(halPluginFunction function, cl_uint index, size_t bytes) {
    const cl_int error = clSetKernelArg(function->kernel, index, bytes, nullptr);
    if (error == CL_SUCCESS) return HAL_SUCCESS;
    return plugin::fail(HAL_ERROR_INVALID_VALUE,
                        "kernel '%s' cannot take %zu bytes of dynamic shared memory: its last "
                        "parameter must be a __local pointer (clSetKernelArg: %s (%d))",
                        function->name.c_str(), bytes, errorName(error), error);
}

// Errors of clEnqueueNDRangeKernel that mean the launch did not fit the kernel or the device.
bool isLaunchShapeError(cl_int error) {
    return error == CL_INVALID_WORK_GROUP_SIZE || error == CL_INVALID_WORK_ITEM_SIZE ||
           error == CL_INVALID_GLOBAL_WORK_SIZE || error == CL_INVALID_KERNEL_ARGS;
}

}  // namespace

halError launchKernel(halPluginStream stream, halPluginFunction function, halDim3 grid,
                      halDim3 block, size_t dynamicSharedBytes, const halKernelArg* args,
                      uint32_t numArgs) {
    const bool dynamicShared = dynamicSharedBytes > 0;
    if (numArgs + (dynamicShared ? 1u : 0u) != function->numArgs) {
        return plugin::fail(
            HAL_ERROR_INVALID_VALUE,
            "kernel '%s' has %u parameters; the launch passes %u argument(s)%s",
            function->name.c_str(), function->numArgs, numArgs,
            dynamicShared ? " and the __local pointer for dynamic shared memory" : "");
    }
    const size_t global[3] = {size_t{grid.x} * block.x, size_t{grid.y} * block.y,
                              size_t{grid.z} * block.z};
    const size_t local[3] = {block.x, block.y, block.z};
    std::lock_guard lock(function->launchMutex);
    for (uint32_t i = 0; i < numArgs; ++i) {
        const halError error = setArgument(function, stream->device->platform.svm, i, args[i]);
        if (error != HAL_SUCCESS) return error;
    }
    if (dynamicShared) {
        if (halError error = setDynamicShared(function, numArgs, dynamicSharedBytes)) {
            return error;
        }
    }
    return stream->submit([&](cl_event* last) {
        const cl_int error = clEnqueueNDRangeKernel(stream->queue, function->kernel, 3, nullptr,
                                                    global, local, 0, nullptr, last);
        if (isLaunchShapeError(error)) {
            return plugin::fail(HAL_ERROR_INVALID_VALUE,
                                "kernel '%s' with blocks of %ux%ux%u: clEnqueueNDRangeKernel: "
                                "%s (%d)",
                                function->name.c_str(), block.x, block.y, block.z, errorName(error),
                                error);
        }
        return checkCall(error, "clEnqueueNDRangeKernel");
    });
}

}  // namespace polyhal::opencl
