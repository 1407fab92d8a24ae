// Typed reads of clGetDeviceInfo and clGetEventInfo, and waits for one command.
#include "engine/cl_info.hpp"

#include "error.hpp"

namespace polyhal::opencl {

std::string deviceInfoString(cl_device_id device, cl_device_info query) {
    size_t size = 0;
    if (clGetDeviceInfo(device, query, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
    std::string value(size, '\0');
    if (clGetDeviceInfo(device, query, size, value.data(), nullptr) != CL_SUCCESS) return {};
    value.resize(value.find('\0'));
    return value;
}

halError executionStatus(cl_event event, cl_int* status) {
    return checkCall(
        clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof *status, status, nullptr),
        "clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)");
}

halError waitForCommand(cl_event event, cl_int* status) {
    const cl_int waited = clWaitForEvents(1, &event);
    if (waited == CL_SUCCESS) {  // only when the command completed without error
        *status = CL_COMPLETE;
        return HAL_SUCCESS;
    }
    // A failed command ends the wait with this code; its own status then says how it failed.
    if (waited != CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
        return checkCall(waited, "clWaitForEvents");
    }
    return executionStatus(event, status);
}

}  // namespace polyhal::opencl
