// HIP results as halErrors, and their names and texts for messages.
#include "api.hpp"

namespace polyhal::hip {

halError HipApi::toHalError(hipError_t result) noexcept {
    switch (result) {
    case hipSuccess: return HAL_SUCCESS;
    case hipErrorNotReady: return HAL_ERROR_NOT_READY;
    case hipErrorInvalidValue:
    case hipErrorInvalidConfiguration:
    case hipErrorLaunchOutOfResources:  // the block does not fit the kernel's needs
        return HAL_ERROR_INVALID_VALUE;
    case hipErrorOutOfMemory: return HAL_ERROR_OUT_OF_MEMORY;
    case hipErrorInvalidHandle:
    case hipErrorInvalidContext:
    case hipErrorContextIsDestroyed: return HAL_ERROR_INVALID_HANDLE;
    case hipErrorNoDevice:
    case hipErrorInsufficientDriver: return HAL_ERROR_NO_DEVICE;
    case hipErrorInvalidDevice: return HAL_ERROR_INVALID_DEVICE;
    case hipErrorInvalidImage:
    case hipErrorNoBinaryForGpu:
    case hipErrorInvalidKernelFile:
    case hipErrorInvalidSource:
    case hipErrorSharedObjectSymbolNotFound:
    case hipErrorSharedObjectInitFailed: return HAL_ERROR_INVALID_IMAGE;
    case hipErrorNotFound: return HAL_ERROR_NOT_FOUND;
    case hipErrorNotSupported: return HAL_ERROR_NOT_SUPPORTED;
    // The application registered the memory through HIP itself.
    case hipErrorHostMemoryAlreadyRegistered: return HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    case hipErrorHostMemoryNotRegistered: return HAL_ERROR_HOST_MEMORY_NOT_REGISTERED;
    // A kernel that faulted.
    case hipErrorLaunchFailure:
    case hipErrorIllegalAddress:
    case hipErrorLaunchTimeOut:
    case hipErrorAssert:
    case hipErrorECCNotCorrectable: return HAL_ERROR_LAUNCH_FAILED;
    default: return HAL_ERROR_BACKEND;
    }
}

void HipApi::describe(hipError_t result, const char** name, const char** text) noexcept {
    *name = symbols.getErrorName.address(result);
    *text = symbols.getErrorString.address(result);
}

}  // namespace polyhal::hip
