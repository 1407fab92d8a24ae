// The device's profiling clock read on the host's steady clock.
#include "device_clock.hpp"

#include <chrono>
#include <limits>

#include "../error.hpp"

namespace polyhal::opencl {

namespace {

constexpr uint64_t kRecalibrationNs = 1'000'000'000;
// Markers enqueued per calibration; the one enqueued fastest bounds the offset best.
constexpr int kCalibrationTries = 5;

uint64_t steadyNow() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
}

}  // namespace

DeviceClock::~DeviceClock() {
    if (queue_ != nullptr) clReleaseCommandQueue(queue_);
}

halError DeviceClock::toHost(cl_ulong deviceNs, uint64_t* hostNs) {
    std::lock_guard lock(mutex_);
    const uint64_t now = steadyNow();
    if (calibratedAt_ == 0 || now - calibratedAt_ > kRecalibrationNs) {
        if (halError error = calibrate(now)) return error;
    }
    *hostNs = static_cast<uint64_t>(static_cast<int64_t>(deviceNs) + hostMinusDevice_);
    return HAL_SUCCESS;
}

halError DeviceClock::calibrate(uint64_t now) {
    if (queue_ == nullptr) {
        const cl_queue_properties properties[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE,
                                                  0};
        cl_int error = CL_SUCCESS;
        queue_ = clCreateCommandQueueWithProperties(context_, device_, properties, &error);
        if (error != CL_SUCCESS) {
            queue_ = nullptr;
            return checkCall(error, "clCreateCommandQueueWithProperties");
        }
    }
    uint64_t narrowest = std::numeric_limits<uint64_t>::max();
    for (int i = 0; i < kCalibrationTries; ++i) {
        cl_event marker = nullptr;
        const uint64_t before = steadyNow();
        const cl_int enqueued = clEnqueueMarkerWithWaitList(queue_, 0, nullptr, &marker);
        const uint64_t after = steadyNow();
        if (enqueued != CL_SUCCESS) return checkCall(enqueued, "clEnqueueMarkerWithWaitList");
        // Profiling times are there once the command has completed.
        cl_int error = clWaitForEvents(1, &marker);
        cl_ulong queued = 0;
        if (error == CL_SUCCESS) {
            error = clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_QUEUED, sizeof queued,
                                            &queued, nullptr);
        }
        // Intel's OpenCL CPU runtime (2026.2) answers 0 for a marker's queued time; its submit
        // time, taken while clEnqueueMarkerWithWaitList runs, bounds the offset as well there.
        if (error == CL_SUCCESS && queued == 0) {
            error = clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_SUBMIT, sizeof queued,
                                            &queued, nullptr);
        }
        clReleaseEvent(marker);
        if (error != CL_SUCCESS) {
            return checkCall(error, "clGetEventProfilingInfo(CL_PROFILING_COMMAND_QUEUED)");
        }
        if (after - before < narrowest) {
            narrowest = after - before;
            hostMinusDevice_ =
                static_cast<int64_t>(before + (after - before) / 2) - static_cast<int64_t>(queued);
        }
    }
    calibratedAt_ = now;
    return HAL_SUCCESS;
}

}  // namespace polyhal::opencl
