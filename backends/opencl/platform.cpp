// initialize and deviceGetCount: which OpenCL devices the backend offers.
#include "platform.hpp"

#include <CL/cl_ext.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "engine/cl_info.hpp"
#include "entries.hpp"
#include "error.hpp"

namespace polyhal::opencl {

namespace {

std::vector<std::unique_ptr<Platform>> gPlatforms;
std::vector<DeviceEntry> gDevices;

// Why the backend cannot use `device`, or nullptr when it can. Device memory is SVM (see
// memory.cpp), so a device without coarse-grain SVM buffers (OpenCL 1.x, or 3.0 without SVM)
// is left out.
const char* unusableReason(cl_device_id device) {
    if (!deviceInfo<cl_bool>(device, CL_DEVICE_AVAILABLE, CL_FALSE)) {
        return "CL_DEVICE_AVAILABLE is false";
    }
    if (!(deviceInfo<cl_device_svm_capabilities>(device, CL_DEVICE_SVM_CAPABILITIES, 0) &
          CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)) {
        return "no shared virtual memory (CL_DEVICE_SVM_COARSE_GRAIN_BUFFER), which the "
               "backend needs for device memory";
    }
    return nullptr;
}

std::vector<cl_device_id> platformDevices(cl_platform_id platform) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) {
        return {};  // CL_DEVICE_NOT_FOUND: a platform without devices
    }
    std::vector<cl_device_id> devices(count);
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr) !=
        CL_SUCCESS) {
        return {};
    }
    return devices;
}

std::string platformName(cl_platform_id platform) {
    size_t size = 0;
    if (clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, nullptr, &size) != CL_SUCCESS) return {};
    std::string name(size, '\0');
    if (clGetPlatformInfo(platform, CL_PLATFORM_NAME, size, name.data(), nullptr) != CL_SUCCESS) {
        return {};
    }
    name.resize(name.find('\0'));
    return name;
}

std::string lowerCase(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

// Whether POLYHAL_OPENCL_PLATFORM (a case-insensitive part of the platform's name, such as
// "intel" or "portable") lets the backend use `name`; unset or empty lets every platform in.
bool platformChosen(const std::string& name) {
    const char* wanted = std::getenv("POLYHAL_OPENCL_PLATFORM");
    if (wanted == nullptr || *wanted == '\0') return true;
    return lowerCase(name).find(lowerCase(wanted)) != std::string::npos;
}

// Asynchronous errors the OpenCL implementation reports about a context (some drivers explain
// a failed kernel here only).
void CL_CALLBACK logContextError(const char* detail, const void*, size_t, void*) {
    plugin::log(HAL_LOG_ERROR, "OpenCL context error: %s", detail);
}

// Adds the usable devices of `platform`, with one context for them; appends to `skipped` why
// any device was left out.
void addPlatform(cl_platform_id id, std::string& skipped) {
    std::vector<cl_device_id> usable;
    for (cl_device_id device : platformDevices(id)) {
        if (const char* reason = unusableReason(device)) {
            std::string name = deviceInfoString(device, CL_DEVICE_NAME);
            plugin::log(HAL_LOG_INFO, "OpenCL device '%s' is not used: %s", name.c_str(), reason);
            skipped += " '" + name + "': " + reason + ";";
        } else {
            usable.push_back(device);
        }
    }
    if (usable.empty()) return;
    const cl_context_properties properties[] = {CL_CONTEXT_PLATFORM,
                                                reinterpret_cast<cl_context_properties>(id), 0};
    cl_int error = CL_SUCCESS;
    cl_context context = clCreateContext(properties, static_cast<cl_uint>(usable.size()),
                                         usable.data(), logContextError, nullptr, &error);
    if (context == nullptr) {
        plugin::log(HAL_LOG_WARN, "clCreateContext: %s (%d); platform skipped", errorName(error),
                    error);
        skipped += std::string(" a platform: clCreateContext: ") + errorName(error) + ";";
        return;
    }
    auto platform = std::make_unique<Platform>();
    platform->context = context;
    platform->svmAlignment = 256;
    for (cl_device_id device : usable) {
        // In bits; OpenCL's full profile guarantees at least 1024 (128 bytes).
        const size_t bytes = deviceInfo<cl_uint>(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, 1024) / 8;
        platform->svmAlignment = std::min(platform->svmAlignment, bytes);
    }
    platform->name = platformName(id);
    for (cl_device_id device : usable) gDevices.push_back({device, platform.get()});
    gPlatforms.push_back(std::move(platform));
}

}  // namespace

const DeviceEntry& deviceEntry(int ordinal) {
    return gDevices[static_cast<size_t>(ordinal)];
}

halError initialize() {
    cl_uint count = 0;
    const cl_int error = clGetPlatformIDs(0, nullptr, &count);
    if (error == CL_PLATFORM_NOT_FOUND_KHR || (error == CL_SUCCESS && count == 0)) {
        return plugin::fail(HAL_ERROR_NO_DEVICE,
                            "clGetPlatformIDs: %s (%d): no OpenCL platform is installed "
                            "(the ICD loader found no driver listed in /etc/OpenCL/vendors "
                            "or OCL_ICD_VENDORS)",
                            errorName(CL_PLATFORM_NOT_FOUND_KHR), CL_PLATFORM_NOT_FOUND_KHR);
    }
    if (error != CL_SUCCESS) return failCall(HAL_ERROR_NO_DEVICE, "clGetPlatformIDs", error);
    std::vector<cl_platform_id> platforms(count);
    if (cl_int e = clGetPlatformIDs(count, platforms.data(), nullptr); e != CL_SUCCESS) {
        return failCall(HAL_ERROR_NO_DEVICE, "clGetPlatformIDs", e);
    }
    std::string skipped;
    std::string notChosen;
    for (cl_platform_id platform : platforms) {
        const std::string name = platformName(platform);
        if (platformChosen(name)) {
            addPlatform(platform, skipped);
        } else {
            plugin::log(HAL_LOG_INFO,
                        "OpenCL platform '%s' is not used: POLYHAL_OPENCL_PLATFORM "
                        "does not match it",
                        name.c_str());
            notChosen += " '" + name + "'";
        }
    }
    if (gDevices.empty() && !notChosen.empty()) {
        return plugin::fail(HAL_ERROR_NO_DEVICE,
                            "POLYHAL_OPENCL_PLATFORM='%s' (a case-insensitive part of a platform "
                            "name) leaves no usable OpenCL device; not matched:%s%s",
                            std::getenv("POLYHAL_OPENCL_PLATFORM"), notChosen.c_str(),
                            skipped.empty() ? "" : ("; unusable:" + skipped).c_str());
    }
    if (gDevices.empty()) {
        return plugin::fail(HAL_ERROR_NO_DEVICE, "no usable OpenCL device on %u platform(s):%s",
                            count, skipped.empty() ? " none has a device" : skipped.c_str());
    }
    // Accelerators before CPU devices, so that device 0 is a GPU when there is one.
    std::stable_partition(gDevices.begin(), gDevices.end(), [](const DeviceEntry& entry) {
        return !(deviceInfo<cl_device_type>(entry.id, CL_DEVICE_TYPE, 0) & CL_DEVICE_TYPE_CPU);
    });
    for (size_t i = 0; i < gDevices.size(); ++i) {
        plugin::log(HAL_LOG_INFO, "OpenCL device %zu: '%s' (%s) on platform '%s'", i,
                    deviceInfoString(gDevices[i].id, CL_DEVICE_NAME).c_str(),
                    deviceInfoString(gDevices[i].id, CL_DEVICE_VERSION).c_str(),
                    gDevices[i].platform->name.c_str());
    }
    return HAL_SUCCESS;
}

halError deviceGetCount(int* count) {
    *count = static_cast<int>(gDevices.size());
    return HAL_SUCCESS;
}

// Chosen only by name: an OpenCL platform may be PoCL on the host, which must not win over the
// built-in CPU backend, and a GPU's own backend (CUDA, HIP, Level Zero) serves it better.
halError backendGetInfo(halPluginBackendInfo* info) {
    // OpenCL C source, or SPIR-V (clCreateProgramWithIL).
    return plugin::describeBackend(info, 0, 4 /* kDLOpenCL */, "cl,spv");
}

}  // namespace polyhal::opencl
