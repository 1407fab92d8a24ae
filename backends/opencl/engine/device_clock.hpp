// The device's profiling clock read on the host's steady clock.
#ifndef POLYHAL_BACKENDS_OPENCL_ENGINE_DEVICE_CLOCK_HPP_
#define POLYHAL_BACKENDS_OPENCL_ENGINE_DEVICE_CLOCK_HPP_

#include <CL/cl.h>
#include <polyhal/hal.h>

#include <cstdint>
#include <mutex>

namespace polyhal::opencl {

// OpenCL times commands on the device's clock, which need not be the host's CLOCK_MONOTONIC
// (PoCL's is hundreds of milliseconds apart from it), and clGetDeviceAndHostTimer is optional
// (PoCL refuses it) and reads a host timer of the implementation's choice. So the offset between
// the two is measured: the QUEUED time of a marker against the host clock read around the
// enqueue, keeping the narrowest of a few tries (a few microseconds wide with PoCL).
class DeviceClock {
  public:
    DeviceClock(cl_context context, cl_device_id device) : context_(context), device_(device) {}
    ~DeviceClock();
    DeviceClock(const DeviceClock&) = delete;
    DeviceClock& operator=(const DeviceClock&) = delete;

    // `deviceNs`, a profiling time of this device, in steady-clock nanoseconds. Measures the
    // offset on first use and again once it is a second old: the two clocks drift apart (by
    // microseconds a second where NTP slews one of them).
    halError toHost(cl_ulong deviceNs, uint64_t* hostNs);

  private:
    halError calibrate(uint64_t now);

    const cl_context context_;
    const cl_device_id device_;
    std::mutex mutex_;
    cl_command_queue queue_ = nullptr;  // a profiling queue of its own; guarded by mutex_
    int64_t hostMinusDevice_ = 0;       // guarded by mutex_
    uint64_t calibratedAt_ = 0;         // steady-clock ns; 0: never; guarded by mutex_
};

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_ENGINE_DEVICE_CLOCK_HPP_
