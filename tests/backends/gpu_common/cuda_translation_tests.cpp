// CUDA values as polyhal sees them: the result codes a user acts on, and the event flags.
#include <catch2/catch.hpp>
#include <vector>

#include "cuda/api.hpp"
#include "gpu_common/event.hpp"

using polyhal::cuda::CudaApi;

TEST_CASE("CUDA results map to the halErrors a caller acts on", "[cuda][errors]") {
    CHECK(CudaApi::toHalError(CUDA_SUCCESS) == HAL_SUCCESS);
    // Polling loops rely on NOT_READY being told apart from failures.
    CHECK(CudaApi::toHalError(CUDA_ERROR_NOT_READY) == HAL_ERROR_NOT_READY);
    CHECK(CudaApi::toHalError(CUDA_ERROR_OUT_OF_MEMORY) == HAL_ERROR_OUT_OF_MEMORY);
    CHECK(CudaApi::toHalError(CUDA_ERROR_INVALID_VALUE) == HAL_ERROR_INVALID_VALUE);
    CHECK(CudaApi::toHalError(CUDA_ERROR_NOT_FOUND) == HAL_ERROR_NOT_FOUND);
    CHECK(CudaApi::toHalError(CUDA_ERROR_INVALID_DEVICE) == HAL_ERROR_INVALID_DEVICE);
    CHECK(CudaApi::toHalError(CUDA_ERROR_NOT_SUPPORTED) == HAL_ERROR_NOT_SUPPORTED);
}

TEST_CASE("CUDA's ways of rejecting a module image are INVALID_IMAGE", "[cuda][errors][module]") {
    for (CUresult rejected : {CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_NO_BINARY_FOR_GPU,
                              CUDA_ERROR_INVALID_PTX, CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
                              CUDA_ERROR_JIT_COMPILER_NOT_FOUND, CUDA_ERROR_INVALID_SOURCE}) {
        CAPTURE(rejected);
        CHECK(CudaApi::toHalError(rejected) == HAL_ERROR_INVALID_IMAGE);
    }
}

TEST_CASE("CUDA's kernel faults are LAUNCH_FAILED", "[cuda][errors]") {
    std::vector<CUresult> faults = {CUDA_ERROR_LAUNCH_FAILED,
                                    CUDA_ERROR_ILLEGAL_ADDRESS,
                                    CUDA_ERROR_ILLEGAL_INSTRUCTION,
                                    CUDA_ERROR_MISALIGNED_ADDRESS,
                                    CUDA_ERROR_ASSERT,
                                    CUDA_ERROR_LAUNCH_TIMEOUT,
                                    CUDA_ERROR_NVLINK_UNCORRECTABLE,
                                    CUDA_ERROR_MPS_CLIENT_TERMINATED,
                                    CUDA_ERROR_EXTERNAL_DEVICE};
#if CUDA_VERSION >= 13000
    faults.insert(faults.end(), {CUDA_ERROR_CONTAINED, CUDA_ERROR_TENSOR_MEMORY_LEAK});
#endif
    for (CUresult fault : faults) {
        CAPTURE(fault);
        CHECK(CudaApi::toHalError(fault) == HAL_ERROR_LAUNCH_FAILED);
    }
}

TEST_CASE("a driver that cannot serve any device is NO_DEVICE", "[cuda][errors]") {
    for (CUresult missing : {CUDA_ERROR_NO_DEVICE, CUDA_ERROR_STUB_LIBRARY,
                             CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, CUDA_ERROR_DEVICE_UNAVAILABLE}) {
        CAPTURE(missing);
        CHECK(CudaApi::toHalError(missing) == HAL_ERROR_NO_DEVICE);
    }
}

TEST_CASE("a refusal to share with this process is NOT_PERMITTED", "[cuda][errors]") {
    CHECK(CudaApi::toHalError(CUDA_ERROR_NOT_PERMITTED) == HAL_ERROR_NOT_PERMITTED);
}

TEST_CASE("other CUDA results are BACKEND errors", "[cuda][errors]") {
    CHECK(CudaApi::toHalError(CUDA_ERROR_UNKNOWN) == HAL_ERROR_BACKEND);
    CHECK(CudaApi::toHalError(static_cast<CUresult>(123456)) == HAL_ERROR_BACKEND);
}

TEST_CASE("HAL event flags become CUDA's event flags", "[cuda][event]") {
    using polyhal::gpu::vendorEventFlags;
    CHECK(vendorEventFlags<CudaApi>(HAL_EVENT_DEFAULT) == CU_EVENT_DEFAULT);
    CHECK(vendorEventFlags<CudaApi>(HAL_EVENT_DISABLE_TIMING) == CU_EVENT_DISABLE_TIMING);
    CHECK(vendorEventFlags<CudaApi>(HAL_EVENT_BLOCKING_SYNC) == CU_EVENT_BLOCKING_SYNC);
    CHECK(vendorEventFlags<CudaApi>(HAL_EVENT_DISABLE_TIMING | HAL_EVENT_BLOCKING_SYNC) ==
          (CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC));
}
