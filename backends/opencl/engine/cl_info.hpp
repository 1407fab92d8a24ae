// Typed reads of clGetDeviceInfo and clGetEventInfo.
#ifndef POLYHAL_BACKENDS_OPENCL_ENGINE_CL_INFO_HPP_
#define POLYHAL_BACKENDS_OPENCL_ENGINE_CL_INFO_HPP_

#include <CL/cl.h>
#include <polyhal/hal.h>

#include <string>

namespace polyhal::opencl {

// The value of a fixed-size device property, or `fallback` when the device does not know the
// query (an OpenCL 1.x device asked for CL_DEVICE_SVM_CAPABILITIES answers CL_INVALID_VALUE).
template <class T>
T deviceInfo(cl_device_id device, cl_device_info query, T fallback) {
    T value{};
    return clGetDeviceInfo(device, query, sizeof value, &value, nullptr) == CL_SUCCESS ? value
                                                                                       : fallback;
}

// A string device property; "" when the device does not know the query.
std::string deviceInfoString(cl_device_id device, cl_device_info query);

// Reads the CL_EVENT_COMMAND_EXECUTION_STATUS of `event`: CL_COMPLETE, a negative OpenCL error
// when the command failed, or a positive value while it is pending.
halError executionStatus(cl_event event, cl_int* status);

// Blocks until the command of `event` has finished or failed; gives its final execution status.
halError waitForCommand(cl_event event, cl_int* status);

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_ENGINE_CL_INFO_HPP_
