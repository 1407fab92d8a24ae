// Discovery of the OpenCL platforms and devices the backend uses.
#ifndef POLYHAL_BACKENDS_OPENCL_PLATFORM_HPP_
#define POLYHAL_BACKENDS_OPENCL_PLATFORM_HPP_

#include <CL/cl.h>
#include <polyhal/plugin.h>

#include <string>

#include "engine/svm_registry.hpp"

namespace polyhal::opencl {

// One OpenCL platform. Its usable devices share one context, so that events and SVM pointers of
// one device are valid on the others (cross-device waits and copies need nothing extra).
struct Platform {
    std::string name;  // CL_PLATFORM_NAME, which the device log and POLYHAL_OPENCL_PLATFORM use
    cl_context context = nullptr;
    // The largest clSVMAlloc alignment every device of the context supports, at most 256.
    size_t svmAlignment = 0;
    SvmRegistry svm;
};

// A device found by initialize(); the list stays fixed afterwards (plugins are never unloaded).
struct DeviceEntry {
    cl_device_id id;
    Platform* platform;
};

// The device with this backend ordinal; the core passes only ordinals below deviceGetCount().
const DeviceEntry& deviceEntry(int ordinal);

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_PLATFORM_HPP_
