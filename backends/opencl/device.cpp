// deviceOpen, deviceClose, deviceGetInfo and deviceSynchronize.
#include "device.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "cl_info.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "platform.hpp"
#include "stream.hpp"

namespace {

bool hasExtension(cl_device_id device, const char* extension) {
    const std::string list =
        " " + polyhal::opencl::deviceInfoString(device, CL_DEVICE_EXTENSIONS) + " ";
    return list.find(std::string(" ") + extension + " ") != std::string::npos;
}

}  // namespace

halPluginDevice_t::halPluginDevice_t(cl_device_id id, polyhal::opencl::Platform& platform)
    : id(id), platform(platform), context(platform.context) {
    using polyhal::opencl::deviceInfo;
    using polyhal::opencl::deviceInfoString;
    name = deviceInfoString(id, CL_DEVICE_NAME);
    svmCapabilities = deviceInfo<cl_device_svm_capabilities>(id, CL_DEVICE_SVM_CAPABILITIES, 0);
    maxAllocationSize = deviceInfo<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0);
    profiling =
        (deviceInfo<cl_command_queue_properties>(id, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, 0) &
         CL_QUEUE_PROFILING_ENABLE) != 0;
    priorityHints = hasExtension(id, "cl_khr_priority_hints");
    compiler = deviceInfo<cl_bool>(id, CL_DEVICE_COMPILER_AVAILABLE, CL_FALSE) == CL_TRUE;
    acceptsSpirv = deviceInfoString(id, CL_DEVICE_IL_VERSION).find("SPIR-V") != std::string::npos;
}

namespace polyhal::opencl {

halError deviceOpen(int ordinal, halPluginDevice* device) {
    return guard("deviceOpen", [&] {
        const DeviceEntry& entry = deviceEntry(ordinal);
        *device = new halPluginDevice_t(entry.id, *entry.platform);
        return HAL_SUCCESS;
    });
}

void deviceClose(halPluginDevice device) { delete device; }

halError deviceGetInfo(halPluginDevice device, halPluginDeviceInfo* info) {
    halPluginDeviceInfo mine{};
    mine.size = sizeof mine;
    std::strncpy(mine.name, device->name.c_str(), sizeof mine.name - 1);
    mine.totalMemory = deviceInfo<cl_ulong>(device->id, CL_DEVICE_GLOBAL_MEM_SIZE, 0);
    mine.computeUnits = deviceInfo<cl_uint>(device->id, CL_DEVICE_MAX_COMPUTE_UNITS, 0);
    mine.maxThreadsPerBlock = static_cast<uint32_t>(std::min<size_t>(
        deviceInfo<size_t>(device->id, CL_DEVICE_MAX_WORK_GROUP_SIZE, 1), UINT32_MAX));
    mine.maxSharedMemoryPerBlock = deviceInfo<cl_ulong>(device->id, CL_DEVICE_LOCAL_MEM_SIZE, 0);
    mine.maxKernelArgumentBytes = deviceInfo<size_t>(device->id, CL_DEVICE_MAX_PARAMETER_SIZE, 0);
    // Each stream runs its host functions on its own thread (host_func.hpp).
    mine.capabilities = HAL_DEVICE_CAP_HOST_FUNCTIONS | HAL_DEVICE_CAP_CONCURRENT_HOST_FUNCTIONS |
                        HAL_DEVICE_CAP_NATIVE_HANDLES;
    if (device->profiling) mine.capabilities |= HAL_DEVICE_CAP_TIMING_EVENTS;
    if (device->compiler || device->acceptsSpirv) mine.capabilities |= HAL_DEVICE_CAP_KERNELS;
    if (device->hostAccessible()) mine.capabilities |= HAL_DEVICE_CAP_HOST_ACCESSIBLE;
    if (device->priorityHints) {
        // cl_khr_priority_hints offers low, medium and high (see streamCreate).
        mine.capabilities |= HAL_DEVICE_CAP_STREAM_PRIORITIES;
        mine.leastStreamPriority = 1;
        mine.greatestStreamPriority = -1;
    }
    // The core's table may be older (smaller) or newer (larger) than this plugin's.
    const size_t size = std::min(info->size, sizeof mine);
    std::memcpy(reinterpret_cast<char*>(info) + sizeof info->size,
                reinterpret_cast<const char*>(&mine) + sizeof mine.size, size - sizeof info->size);
    return HAL_SUCCESS;
}

halError deviceSynchronize(halPluginDevice device) {
    return guard("deviceSynchronize", [&] {
        std::vector<std::shared_ptr<halPluginStream_t>> streams;
        {
            std::lock_guard lock(device->streamsMutex);
            for (const auto& entry : device->streams) streams.push_back(entry.second);
            // Waited for below, and no longer held by the device: once waited for, they are idle.
            streams.insert(streams.end(), std::make_move_iterator(device->retiring.begin()),
                           std::make_move_iterator(device->retiring.end()));
            device->retiring.clear();
        }
        // The first failure is returned; streams after it are waited for with their failures
        // left pending, so that its message stays the one the caller reads.
        halError first = HAL_SUCCESS;
        for (const auto& stream : streams) {
            if (first == HAL_SUCCESS) {
                first = stream->synchronize();
            } else {
                stream->waitIdle();
            }
        }
        return first;
    });
}

}  // namespace polyhal::opencl
