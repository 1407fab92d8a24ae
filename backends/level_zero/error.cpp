// Level Zero's results as polyhal errors and messages.
#include "error.hpp"

#include <polyhal/plugin_support.hpp>

namespace polyhal::level_zero {
namespace {

// clang-format off
#define POLYHAL_ZE_RESULTS(X)                                                                      \
    X(ZE_RESULT_SUCCESS, "success")                                                                \
    X(ZE_RESULT_NOT_READY, "synchronization primitive not signaled")                               \
    X(ZE_RESULT_ERROR_DEVICE_LOST, "device hung, reset, was removed, or driver update occurred")   \
    X(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, "insufficient host memory to satisfy call")              \
    X(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, "insufficient device memory to satisfy call")          \
    X(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, "error occurred when building module")                 \
    X(ZE_RESULT_ERROR_MODULE_LINK_FAILURE, "error occurred when linking modules")                  \
    X(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET, "device requires a reset")                            \
    X(ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE, "device currently in low power state")            \
    X(ZE_RESULT_EXP_ERROR_DEVICE_IS_NOT_VERTEX, "device is not represented by a fabric vertex")    \
    X(ZE_RESULT_EXP_ERROR_VERTEX_IS_NOT_DEVICE, "fabric vertex does not represent a device")       \
    X(ZE_RESULT_EXP_ERROR_REMOTE_DEVICE, "fabric vertex represents a remote device or subdevice")  \
    X(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS, "access denied due to permission level")           \
    X(ZE_RESULT_ERROR_NOT_AVAILABLE, "resource already in use or removed")                         \
    X(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE, "external required dependency is unavailable")       \
    X(ZE_RESULT_WARNING_DROPPED_DATA, "data may have been dropped")                                \
    X(ZE_RESULT_ERROR_UNINITIALIZED, "driver is not initialized")                                  \
    X(ZE_RESULT_ERROR_UNSUPPORTED_VERSION, "unsupported version")                                  \
    X(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, "unsupported feature")                                  \
    X(ZE_RESULT_ERROR_INVALID_ARGUMENT, "invalid argument")                                        \
    X(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "handle argument is not valid")                         \
    X(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, "object pointed to by handle still in use by device")  \
    X(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "pointer argument may not be nullptr")                 \
    X(ZE_RESULT_ERROR_INVALID_SIZE, "size argument is invalid")                                    \
    X(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, "size argument is not supported by the device")            \
    X(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT, "alignment argument is not supported by the device")  \
    X(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT, "synchronization object in invalid state")   \
    X(ZE_RESULT_ERROR_INVALID_ENUMERATION, "enumerator argument is not valid")                     \
    X(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION, "enumerator argument is not supported by the device") \
    X(ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT, "image format is not supported by the device")     \
    X(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, "native binary is not supported by the device")       \
    X(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME, "global variable is not found in the module")           \
    X(ZE_RESULT_ERROR_INVALID_KERNEL_NAME, "kernel name is not found in the module")               \
    X(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME, "function name is not found in the module")           \
    X(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, "group size dimension is not valid")           \
    X(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION, "global width dimension is not valid")       \
    X(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, "kernel argument index is not valid")         \
    X(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, "kernel argument size does not match kernel")  \
    X(ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE, "value of kernel attribute is not valid")    \
    X(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED, "module with imports needs to be linked")           \
    X(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE, "command list type does not match queue type")    \
    X(ZE_RESULT_ERROR_OVERLAPPING_REGIONS, "copy operations do not support overlapping regions")   \
    X(ZE_RESULT_WARNING_ACTION_REQUIRED, "an action is required to complete the operation")        \
    X(ZE_RESULT_ERROR_UNKNOWN, "unknown or internal error")
// clang-format on

}  // namespace

const char* resultName(ze_result_t result) {
    switch (result) {
#define POLYHAL_ZE_RESULT_NAME(result, description) \
    case result: return #result;
        POLYHAL_ZE_RESULTS(POLYHAL_ZE_RESULT_NAME)
#undef POLYHAL_ZE_RESULT_NAME
    default: return "ZE_RESULT_<unrecognized>";
    }
}

const char* resultDescription(ze_result_t result) {
    switch (result) {
#define POLYHAL_ZE_RESULT_DESCRIPTION(result, description) \
    case result: return description;
        POLYHAL_ZE_RESULTS(POLYHAL_ZE_RESULT_DESCRIPTION)
#undef POLYHAL_ZE_RESULT_DESCRIPTION
    default: return "a result this backend does not know";
    }
}

halError toHalError(ze_result_t result) {
    switch (result) {
    case ZE_RESULT_SUCCESS: return HAL_SUCCESS;
    case ZE_RESULT_NOT_READY: return HAL_ERROR_NOT_READY;
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: return HAL_ERROR_OUT_OF_MEMORY;
    // On Level Zero a faulting or hung kernel loses the device: the failure of work that ran.
    case ZE_RESULT_ERROR_DEVICE_LOST: return HAL_ERROR_LAUNCH_FAILED;
    case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE:
    case ZE_RESULT_ERROR_MODULE_LINK_FAILURE:
    case ZE_RESULT_ERROR_INVALID_NATIVE_BINARY:
    case ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED: return HAL_ERROR_INVALID_IMAGE;
    case ZE_RESULT_ERROR_INVALID_KERNEL_NAME:
    case ZE_RESULT_ERROR_INVALID_FUNCTION_NAME: return HAL_ERROR_NOT_FOUND;
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: return HAL_ERROR_NOT_SUPPORTED;
    case ZE_RESULT_ERROR_INVALID_ARGUMENT:
    case ZE_RESULT_ERROR_INVALID_SIZE:
    case ZE_RESULT_ERROR_UNSUPPORTED_SIZE:
    case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT:
    case ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION:
    case ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION:
    case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX:
    case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE:
    case ZE_RESULT_ERROR_OVERLAPPING_REGIONS: return HAL_ERROR_INVALID_VALUE;
    default: return HAL_ERROR_BACKEND;
    }
}

std::string describe(ze_result_t result, const char* call) {
    return std::string(call) + ": " + resultName(result) + " (" + resultDescription(result) + ")";
}

halError check(ze_result_t result, const char* call) {
    if (result == ZE_RESULT_SUCCESS) return HAL_SUCCESS;
    return plugin::fail(toHalError(result), "%s", describe(result, call).c_str());
}

}  // namespace polyhal::level_zero
