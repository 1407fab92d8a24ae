// CUDA results as halErrors, and their names and texts for messages.
#include "api.hpp"

namespace polyhal::cuda {

halError CudaApi::toHalError(CUresult result) noexcept {
    switch (result) {
    case CUDA_SUCCESS: return HAL_SUCCESS;
    case CUDA_ERROR_NOT_READY: return HAL_ERROR_NOT_READY;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:  // the block does not fit the kernel's needs
        return HAL_ERROR_INVALID_VALUE;
    case CUDA_ERROR_OUT_OF_MEMORY: return HAL_ERROR_OUT_OF_MEMORY;
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED: return HAL_ERROR_INVALID_HANDLE;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_DEVICE_UNAVAILABLE: return HAL_ERROR_NO_DEVICE;
    case CUDA_ERROR_INVALID_DEVICE: return HAL_ERROR_INVALID_DEVICE;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_JIT_COMPILATION_DISABLED:
    case CUDA_ERROR_INVALID_SOURCE:
    case CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND:
    case CUDA_ERROR_SHARED_OBJECT_INIT_FAILED: return HAL_ERROR_INVALID_IMAGE;
    case CUDA_ERROR_NOT_FOUND: return HAL_ERROR_NOT_FOUND;
    // An interprocess handle the exporter or the system does not let this process open.
    case CUDA_ERROR_NOT_PERMITTED: return HAL_ERROR_NOT_PERMITTED;
    case CUDA_ERROR_NOT_SUPPORTED: return HAL_ERROR_NOT_SUPPORTED;
    // The application registered the memory through CUDA itself (PyTorch's pin_memory does).
    case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: return HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: return HAL_ERROR_HOST_MEMORY_NOT_REGISTERED;
    // A kernel that faulted. CUDA keeps these sticky: every later call on the context
    // returns the same error.
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case CUDA_ERROR_MPS_CLIENT_TERMINATED:
    case CUDA_ERROR_EXTERNAL_DEVICE:
#if CUDA_VERSION >= 13000  // enumerators of recent headers
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
#endif
        return HAL_ERROR_LAUNCH_FAILED;
    default: return HAL_ERROR_BACKEND;
    }
}

void CudaApi::describe(CUresult result, const char** name, const char** text) noexcept {
    if (symbols.getErrorName.address(result, name) != CUDA_SUCCESS) *name = nullptr;
    if (symbols.getErrorString.address(result, text) != CUDA_SUCCESS) *text = nullptr;
    // The toolkit's stub libcuda (found when its folder is on the library path) fails every
    // call with this result, the calls that would name it included.
    if (*name == nullptr && result == CUDA_ERROR_STUB_LIBRARY) {
        *name = "CUDA_ERROR_STUB_LIBRARY";
        *text = "libcuda.so.1 is the CUDA toolkit's stub library, not an NVIDIA driver";
    }
}

}  // namespace polyhal::cuda
