// deviceOpen, deviceClose, deviceGetInfo and deviceSynchronize.
#include "device.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <vector>

#include "engine/cl_info.hpp"
#include "entries.hpp"
#include "platform.hpp"
#include "stream.hpp"

namespace polyhal::opencl {

namespace {

bool hasExtension(cl_device_id device, const char* extension) {
    const std::string list = " " + deviceInfoString(device, CL_DEVICE_EXTENSIONS) + " ";
    return list.find(std::string(" ") + extension + " ") != std::string::npos;
}

}  // namespace

Device::Device(cl_device_id id, Platform& platform)
    : id_(id),
      platform_(platform),
      name_(deviceInfoString(id, CL_DEVICE_NAME)),
      svmCapabilities_(deviceInfo<cl_device_svm_capabilities>(id, CL_DEVICE_SVM_CAPABILITIES, 0)),
      maxAllocationSize_(deviceInfo<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0)),
      profiling_(
          (deviceInfo<cl_command_queue_properties>(id, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, 0) &
           CL_QUEUE_PROFILING_ENABLE) != 0),
      priorityHints_(hasExtension(id, "cl_khr_priority_hints")),
      compiler_(deviceInfo<cl_bool>(id, CL_DEVICE_COMPILER_AVAILABLE, CL_FALSE) == CL_TRUE),
      acceptsSpirv_(deviceInfoString(id, CL_DEVICE_IL_VERSION).find("SPIR-V") != std::string::npos),
      clock_(platform.context, id) {}

void Device::addStream(std::shared_ptr<Stream> stream) {
    std::lock_guard lock(streamsMutex_);
    const Stream* key = stream.get();
    streams_.emplace(key, std::move(stream));
}

void Device::retireStream(const Stream& stream) {
    std::vector<std::shared_ptr<Stream>> released;  // destroyed after the lock
    std::lock_guard lock(streamsMutex_);
    auto found = streams_.find(&stream);
    retiring_.push_back(std::move(found->second));
    streams_.erase(found);
    // A destroyed stream's failure has no one left to report it to: query only tells idle.
    auto idle = std::partition(retiring_.begin(), retiring_.end(), [](const auto& retired) {
        return retired->query() == HAL_ERROR_NOT_READY;
    });
    std::move(idle, retiring_.end(), std::back_inserter(released));
    retiring_.erase(idle, retiring_.end());
}

halError Device::synchronize() {
    std::vector<std::shared_ptr<Stream>> streams;
    {
        std::lock_guard lock(streamsMutex_);
        for (const auto& entry : streams_) streams.push_back(entry.second);
        // Waited for below, and no longer held by the device: once waited for, they are idle.
        streams.insert(streams.end(), std::make_move_iterator(retiring_.begin()),
                       std::make_move_iterator(retiring_.end()));
        retiring_.clear();
    }
    // The first failure is returned; streams after it are waited for with their failures left
    // pending, so that its message stays the one the caller reads.
    halError first = HAL_SUCCESS;
    for (const auto& stream : streams) {
        if (first == HAL_SUCCESS) {
            first = stream->synchronize();
        } else {
            stream->waitIdle();
        }
    }
    return first;
}

halError deviceOpen(int ordinal, halPluginDevice* device) {
    const DeviceEntry& entry = deviceEntry(ordinal);
    *device = plugin::toHandle(new Device(entry.id, *entry.platform));
    return HAL_SUCCESS;
}

void deviceClose(halPluginDevice device) {
    delete &plugin::fromHandle<Device>(device);
}

halError deviceGetInfo(halPluginDevice device, halPluginDeviceInfo* info) {
    const Device& self = plugin::fromHandle<Device>(device);
    halPluginDeviceInfo mine{};
    mine.size = sizeof mine;
    std::strncpy(mine.name, self.name().c_str(), sizeof mine.name - 1);
    mine.totalMemory = deviceInfo<cl_ulong>(self.id(), CL_DEVICE_GLOBAL_MEM_SIZE, 0);
    mine.computeUnits = deviceInfo<cl_uint>(self.id(), CL_DEVICE_MAX_COMPUTE_UNITS, 0);
    mine.maxThreadsPerBlock = static_cast<uint32_t>(std::min<size_t>(
        deviceInfo<size_t>(self.id(), CL_DEVICE_MAX_WORK_GROUP_SIZE, 1), UINT32_MAX));
    mine.maxSharedMemoryPerBlock = deviceInfo<cl_ulong>(self.id(), CL_DEVICE_LOCAL_MEM_SIZE, 0);
    mine.maxKernelArgumentBytes = deviceInfo<size_t>(self.id(), CL_DEVICE_MAX_PARAMETER_SIZE, 0);
    // Each stream runs its host functions on its own thread (engine/host_work_thread.hpp).
    mine.capabilities = HAL_DEVICE_CAP_HOST_FUNCTIONS | HAL_DEVICE_CAP_CONCURRENT_HOST_FUNCTIONS |
                        HAL_DEVICE_CAP_NATIVE_HANDLES;
    if (self.profiling()) mine.capabilities |= HAL_DEVICE_CAP_TIMING_EVENTS;
    if (self.compiler() || self.acceptsSpirv()) mine.capabilities |= HAL_DEVICE_CAP_KERNELS;
    if (self.hostAccessible()) mine.capabilities |= HAL_DEVICE_CAP_HOST_ACCESSIBLE;
    if (self.fineGrainBuffers()) mine.capabilities |= HAL_DEVICE_CAP_MANAGED_MEMORY;
    if (self.priorityHints()) {
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
    return plugin::fromHandle<Device>(device).synchronize();
}

}  // namespace polyhal::opencl
