// OpenCL error codes turned into polyhal errors that keep OpenCL's own name and number.
#ifndef POLYHAL_OPENCL_ERROR_HPP_
#define POLYHAL_OPENCL_ERROR_HPP_

#include <CL/cl.h>

#include <exception>
#include <new>
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

// Runs `body` (returning halError) so that no C++ exception leaves the plugin: allocation
// failures become HAL_ERROR_OUT_OF_MEMORY, anything else HAL_ERROR_UNKNOWN with its text.
template <class Body>
halError guard(const char* entry, Body&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "%s: out of host memory", entry);
    } catch (const std::exception& e) {
        return plugin::fail(HAL_ERROR_UNKNOWN, "%s: %s", entry, e.what());
    }
}

}  // namespace polyhal::opencl

#endif  // POLYHAL_OPENCL_ERROR_HPP_
