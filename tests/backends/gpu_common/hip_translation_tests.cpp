// HIP values as polyhal sees them: the result codes a user acts on, the event flags and the copy
// directions.
#include <catch2/catch.hpp>

#include "gpu_common/event.hpp"
#include "hip/api.hpp"

using polyhal::hip::HipApi;

TEST_CASE("HIP results map to the halErrors a caller acts on", "[hip][errors]") {
    CHECK(HipApi::toHalError(hipSuccess) == HAL_SUCCESS);
    // Polling loops rely on NOT_READY being told apart from failures.
    CHECK(HipApi::toHalError(hipErrorNotReady) == HAL_ERROR_NOT_READY);
    CHECK(HipApi::toHalError(hipErrorOutOfMemory) == HAL_ERROR_OUT_OF_MEMORY);
    CHECK(HipApi::toHalError(hipErrorInvalidValue) == HAL_ERROR_INVALID_VALUE);
    CHECK(HipApi::toHalError(hipErrorNotFound) == HAL_ERROR_NOT_FOUND);
    CHECK(HipApi::toHalError(hipErrorInvalidDevice) == HAL_ERROR_INVALID_DEVICE);
    CHECK(HipApi::toHalError(hipErrorNoDevice) == HAL_ERROR_NO_DEVICE);
    CHECK(HipApi::toHalError(hipErrorNotSupported) == HAL_ERROR_NOT_SUPPORTED);
}

TEST_CASE("HIP's ways of rejecting a module image are INVALID_IMAGE", "[hip][errors][module]") {
    for (hipError_t rejected : {hipErrorInvalidImage, hipErrorNoBinaryForGpu,
                                hipErrorInvalidKernelFile, hipErrorInvalidSource}) {
        CAPTURE(rejected);
        CHECK(HipApi::toHalError(rejected) == HAL_ERROR_INVALID_IMAGE);
    }
}

TEST_CASE("HIP's kernel faults are LAUNCH_FAILED", "[hip][errors]") {
    for (hipError_t fault :
         {hipErrorLaunchFailure, hipErrorIllegalAddress, hipErrorAssert, hipErrorLaunchTimeOut}) {
        CAPTURE(fault);
        CHECK(HipApi::toHalError(fault) == HAL_ERROR_LAUNCH_FAILED);
    }
}

TEST_CASE("other HIP results are BACKEND errors", "[hip][errors]") {
    CHECK(HipApi::toHalError(hipErrorUnknown) == HAL_ERROR_BACKEND);
    CHECK(HipApi::toHalError(static_cast<hipError_t>(123456)) == HAL_ERROR_BACKEND);
}

TEST_CASE("HAL event flags become HIP's event flags", "[hip][event]") {
    using polyhal::gpu::vendorEventFlags;
    CHECK(vendorEventFlags<HipApi>(HAL_EVENT_DEFAULT) == hipEventDefault);
    CHECK(vendorEventFlags<HipApi>(HAL_EVENT_DISABLE_TIMING) == hipEventDisableTiming);
    CHECK(vendorEventFlags<HipApi>(HAL_EVENT_BLOCKING_SYNC) == hipEventBlockingSync);
    CHECK(vendorEventFlags<HipApi>(HAL_EVENT_DISABLE_TIMING | HAL_EVENT_BLOCKING_SYNC) ==
          (hipEventDisableTiming | hipEventBlockingSync));
}

TEST_CASE("every explicit copy direction keeps its meaning for HIP", "[hip][memcpy]") {
    using polyhal::hip::toHipMemcpyKind;
    CHECK(toHipMemcpyKind(HAL_MEMCPY_HOST_TO_HOST) == hipMemcpyHostToHost);
    CHECK(toHipMemcpyKind(HAL_MEMCPY_HOST_TO_DEVICE) == hipMemcpyHostToDevice);
    CHECK(toHipMemcpyKind(HAL_MEMCPY_DEVICE_TO_HOST) == hipMemcpyDeviceToHost);
    CHECK(toHipMemcpyKind(HAL_MEMCPY_DEVICE_TO_DEVICE) == hipMemcpyDeviceToDevice);
}
