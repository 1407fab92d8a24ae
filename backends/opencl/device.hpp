// The backend's device object: one OpenCL device, what it supports, and its streams.
#ifndef POLYHAL_BACKENDS_OPENCL_DEVICE_HPP_
#define POLYHAL_BACKENDS_OPENCL_DEVICE_HPP_

#include <CL/cl.h>
#include <polyhal/plugin.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/device_clock.hpp"
#include "platform.hpp"

namespace polyhal::opencl {

class Stream;

// What halPluginDevice points to.
class Device {
  public:
    using Handle = halPluginDevice;

    // Reads the device's properties. Throws std::bad_alloc.
    Device(cl_device_id id, Platform& platform);
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    cl_device_id id() const { return id_; }
    Platform& platform() const { return platform_; }
    // The platform's context, shared by the devices of one platform.
    cl_context context() const { return platform_.context; }
    const std::string& name() const { return name_; }
    cl_ulong maxAllocationSize() const { return maxAllocationSize_; }
    // Queues can time commands (CL_QUEUE_PROFILING_ENABLE).
    bool profiling() const { return profiling_; }
    // Its profiling clock, read on the host's steady clock.
    DeviceClock& clock() { return clock_; }
    // cl_khr_priority_hints.
    bool priorityHints() const { return priorityHints_; }
    // Builds OpenCL C source.
    bool compiler() const { return compiler_; }
    // clCreateProgramWithIL takes SPIR-V.
    bool acceptsSpirv() const { return acceptsSpirv_; }

    // Device memory is fine-grain (host-dereferenceable) only where the device can also use any
    // host memory (fine-grain system SVM), which is what HAL_DEVICE_CAP_HOST_ACCESSIBLE promises;
    // elsewhere it is coarse-grain, the device-local kind that cudaMalloc corresponds to.
    bool hostAccessible() const {
        return (svmCapabilities_ & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM) != 0;
    }
    // Page-locked host memory comes from fine-grain SVM buffers where the device has them, so
    // kernels can use it directly.
    bool fineGrainBuffers() const {
        return (svmCapabilities_ & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) != 0;
    }

    // Makes `stream`, a new stream of this device, one that synchronize() waits for.
    void addStream(std::shared_ptr<Stream> stream);
    // The stream's handle is destroyed: the device lets it go once its work has finished.
    void retireStream(const Stream& stream);
    // Waits for every stream of the device, destroyed ones whose work had not finished included;
    // returns the first unreported failure among them, once.
    halError synchronize();

  private:
    const cl_device_id id_;
    Platform& platform_;
    std::string name_;
    cl_device_svm_capabilities svmCapabilities_;
    cl_ulong maxAllocationSize_;
    bool profiling_;
    bool priorityHints_;
    bool compiler_;
    bool acceptsSpirv_;
    DeviceClock clock_;

    // The device's live streams, so that synchronize can wait for each. Shared ownership keeps a
    // stream that another thread destroys meanwhile alive until that wait ends.
    std::mutex streamsMutex_;
    std::unordered_map<const Stream*, std::shared_ptr<Stream>> streams_;
    // Destroyed streams whose last command had not finished: synchronize waits for them too, as
    // cuCtxSynchronize waits for the work of destroyed streams. Each is dropped once seen idle
    // (by the next retireStream or synchronize). Guarded by streamsMutex_.
    std::vector<std::shared_ptr<Stream>> retiring_;
};

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_DEVICE_HPP_
