// The backend's device object: one OpenCL device and what it supports.
#ifndef POLYHAL_OPENCL_DEVICE_HPP_
#define POLYHAL_OPENCL_DEVICE_HPP_

#include <CL/cl.h>
#include <polyhal/plugin.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "platform.hpp"

struct halPluginDevice_t {
    halPluginDevice_t(cl_device_id id, polyhal::opencl::Platform& platform);

    cl_device_id id;
    polyhal::opencl::Platform& platform;
    cl_context context;  // platform.context, shared by the devices of one platform
    std::string name;
    cl_device_svm_capabilities svmCapabilities;
    cl_ulong maxAllocationSize;
    bool profiling;      // queues can time commands (CL_QUEUE_PROFILING_ENABLE)
    bool priorityHints;  // cl_khr_priority_hints
    bool compiler;       // builds OpenCL C source
    bool acceptsSpirv;   // clCreateProgramWithIL takes SPIR-V

    // Device memory is fine-grain (host-dereferenceable) only where the device can also use any
    // host memory (fine-grain system SVM), which is what HAL_DEVICE_CAP_HOST_ACCESSIBLE promises;
    // elsewhere it is coarse-grain, the device-local kind that cudaMalloc corresponds to.
    bool hostAccessible() const { return (svmCapabilities & CL_DEVICE_SVM_FINE_GRAIN_SYSTEM) != 0; }
    // Page-locked host memory comes from fine-grain SVM buffers where the device has them, so
    // kernels can use it directly.
    bool fineGrainBuffers() const {
        return (svmCapabilities & CL_DEVICE_SVM_FINE_GRAIN_BUFFER) != 0;
    }

    // The device's live streams, so that deviceSynchronize can wait for each. Shared ownership
    // keeps a stream that another thread destroys meanwhile alive until that wait ends.
    std::mutex streamsMutex;
    std::unordered_map<const halPluginStream_t*, std::shared_ptr<halPluginStream_t>> streams;
    // Destroyed streams whose last command had not finished: deviceSynchronize waits for them
    // too, as cuCtxSynchronize waits for the work of destroyed streams. Each is dropped once seen
    // idle (by the next streamDestroy or deviceSynchronize). Guarded by streamsMutex.
    std::vector<std::shared_ptr<halPluginStream_t>> retiring;
};

#endif  // POLYHAL_OPENCL_DEVICE_HPP_
