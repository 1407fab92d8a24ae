// OpenCL error codes turned into polyhal errors that keep OpenCL's own name and number.
#ifndef POLYHAL_BACKENDS_OPENCL_ERROR_HPP_
#define POLYHAL_BACKENDS_OPENCL_ERROR_HPP_

#include <CL/cl.h>
#include <polyhal/plugin_support.hpp>

namespace polyhal::opencl {

// The name of an OpenCL error code ("CL_OUT_OF_RESOURCES"); "CL_UNKNOWN_ERROR" for codes that
// neither the core specification nor a Khronos extension defines.
const char* errorName(cl_int error);

// Reports the failed OpenCL call `call` as `code`: "clFinish: CL_OUT_OF_RESOURCES (-5)".
halError failCall(halError code, const char* call, cl_int error);

// HAL_SUCCESS for CL_SUCCESS; otherwise reports the call, as HAL_ERROR_OUT_OF_MEMORY for the
// codes by which OpenCL says an allocation failed and as HAL_ERROR_BACKEND for every other code.
halError checkCall(cl_int error, const char* call);

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_ERROR_HPP_
