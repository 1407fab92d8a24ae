#include "device.h"

#include <polyhal/plugin_support.hpp>

#include <algorithm>
#include <utility>
#include <vector>

#include "error.h"
#include "stream.h"
#include "symbols.h"
#include "translate.h"

namespace polyhal::level_zero {
namespace {

struct Platform {
    struct Entry {
        Driver* driver;
        ze_device_handle_t device;
    };
    std::vector<std::unique_ptr<Driver>> drivers;  // those with at least one GPU
    std::vector<Entry> devices;                    // polyhal's ordinals, in driver order
};

// Set by initialize() and never destroyed: a loaded plugin is never unloaded, and its objects
// may be in use until the process exits, when the loader may already have been finalised.
const Platform* platform = nullptr;

// A driver's structure of type `type`, all else zero, ready to be filled.
template <typename Properties>
Properties describedAs(ze_structure_type_t type) {
    Properties properties{};
    properties.stype = type;
    return properties;
}

// The GPU devices of `handle`, with the driver (and its context) when there is one.
halError discoverDriver(ze_driver_handle_t handle, Platform* found) {
    uint32_t count = 0;
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGet, handle, &count, nullptr);
    std::vector<ze_device_handle_t> devices(count);
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGet, handle, &count, devices.data());
    std::vector<ze_device_handle_t> gpus;
    for (ze_device_handle_t device : devices) {
        auto properties =
            describedAs<ze_device_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES);
        POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetProperties, device, &properties);
        if (properties.type == ZE_DEVICE_TYPE_GPU) gpus.push_back(device);
    }
    if (gpus.empty()) return HAL_SUCCESS;

    const ze_context_desc_t desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ze_context_handle_t context = nullptr;
    POLYHAL_ZE_RETURN_IF_ERROR(zeContextCreate, handle, &desc, &context);
    std::unique_ptr<Driver> driver;
    try {
        driver = std::make_unique<Driver>(handle, context);
    } catch (...) {
        ze.zeContextDestroy(context);
        throw;
    }
    for (ze_device_handle_t gpu : gpus) found->devices.push_back({driver.get(), gpu});
    found->drivers.push_back(std::move(driver));
    return HAL_SUCCESS;
}

// Whether `device` and every other device of the platform copy to each other directly.
halError reachesEveryPeer(const Platform::Entry& device, bool* reaches) {
    *reaches = true;
    for (const Platform::Entry& other : platform->devices) {
        if (other.device == device.device) continue;
        if (other.driver != device.driver) {
            *reaches = false;
            return HAL_SUCCESS;
        }
        for (const auto& [from, to] : {std::pair(device.device, other.device),
                                       std::pair(other.device, device.device)}) {
            ze_bool_t canAccess = 0;
            POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceCanAccessPeer, from, to, &canAccess);
            if (canAccess == 0) *reaches = false;
        }
    }
    return HAL_SUCCESS;
}

}  // namespace

Driver::Driver(ze_driver_handle_t handle, ze_context_handle_t context)
    : handle(handle), context(context), events(std::make_unique<EventSlotPool>(context)) {}

Driver::~Driver() {
    events.reset();
    const ze_result_t result = ze.zeContextDestroy(context);
    if (result != ZE_RESULT_SUCCESS) {
        plugin::log(HAL_LOG_WARN, "zeContextDestroy: %s", resultName(result));
    }
}

halError initialize() {
    if (halError error = loadSymbols(); error != HAL_SUCCESS) return error;
    const ze_result_t initialized = ze.zeInit(ZE_INIT_FLAG_GPU_ONLY);
    if (initialized != ZE_RESULT_SUCCESS) {
        return plugin::fail(HAL_ERROR_NO_DEVICE,
                            "no Level Zero driver was found: zeInit(ZE_INIT_FLAG_GPU_ONLY) "
                            "returned %s (%s)",
                            resultName(initialized), resultDescription(initialized));
    }
    uint32_t count = 0;
    POLYHAL_ZE_RETURN_IF_ERROR(zeDriverGet, &count, nullptr);
    std::vector<ze_driver_handle_t> drivers(count);
    POLYHAL_ZE_RETURN_IF_ERROR(zeDriverGet, &count, drivers.data());
    if (count == 0) {
        return plugin::fail(HAL_ERROR_NO_DEVICE,
                            "no Level Zero driver was found: zeDriverGet reports none");
    }
    Platform found;
    for (ze_driver_handle_t driver : drivers) {
        if (halError error = discoverDriver(driver, &found); error != HAL_SUCCESS) return error;
    }
    if (found.devices.empty()) {
        return plugin::fail(HAL_ERROR_NO_DEVICE,
                            "no Level Zero GPU was found: %u driver(s) report no GPU device",
                            count);
    }
    platform = new Platform(std::move(found));
    return HAL_SUCCESS;
}

halError deviceGetCount(int* count) {
    *count = static_cast<int>(platform->devices.size());
    return HAL_SUCCESS;
}

halError deviceOpen(int ordinal, halPluginDevice* device) {
    const Platform::Entry& entry = platform->devices.at(static_cast<size_t>(ordinal));
    auto opened = std::make_unique<halPluginDevice_t>();
    opened->driver = entry.driver;
    opened->device = entry.device;

    // The 1.2 form gives the timer resolution in ticks per second rather than whole nanoseconds.
    opened->properties.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetProperties, entry.device, &opened->properties);
    opened->compute.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetComputeProperties, entry.device, &opened->compute);

    uint32_t count = 0;
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetMemoryProperties, entry.device, &count, nullptr);
    std::vector<ze_device_memory_properties_t> memories(
        count,
        describedAs<ze_device_memory_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES));
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetMemoryProperties, entry.device, &count, memories.data());
    for (const auto& memory : memories) opened->totalMemory += memory.totalSize;

    count = 0;
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetCommandQueueGroupProperties, entry.device, &count,
                               nullptr);
    std::vector<ze_command_queue_group_properties_t> groups(
        count, describedAs<ze_command_queue_group_properties_t>(
                   ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES));
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetCommandQueueGroupProperties, entry.device, &count,
                               groups.data());
    const int compute = findComputeQueueGroup(groups.data(), count);
    if (compute < 0) {
        return plugin::fail(HAL_ERROR_BACKEND, "Level Zero device '%s' has no command queue "
                            "group for compute work", opened->properties.name);
    }
    opened->computeQueueOrdinal = static_cast<uint32_t>(compute);
    opened->computeQueueCount = std::max(groups[static_cast<size_t>(compute)].numQueues, 1u);
    opened->copyQueueOrdinal = findCopyOnlyQueueGroup(groups.data(), count);
    if (opened->copyQueueOrdinal >= 0) {
        opened->copyQueueCount = groups[static_cast<size_t>(opened->copyQueueOrdinal)].numQueues;
        if (opened->copyQueueCount == 0) opened->copyQueueOrdinal = -1;
    }
    if (halError error = reachesEveryPeer(entry, &opened->peerCopy); error != HAL_SUCCESS) {
        return error;
    }
    *device = opened.release();
    return HAL_SUCCESS;
}

void deviceClose(halPluginDevice device) {
    reapRetiredStreams(device, true);
    delete device;
}

halError deviceGetInfo(halPluginDevice device, halPluginDeviceInfo* info) {
    fillDeviceInfo(device->properties, device->compute, device->totalMemory,
                   deviceCapabilities(device->peerCopy), info);
    return HAL_SUCCESS;
}

halError deviceSynchronize(halPluginDevice device) {
    std::vector<std::shared_ptr<halPluginStream_t>> live;
    std::vector<std::shared_ptr<halPluginStream_t>> retiring;
    {
        std::lock_guard<std::mutex> lock(device->streamsMutex);
        live = device->streams;
        retiring = device->retiringStreams;
    }
    // Every stream is waited for; the first failure is the one reported (a later failure would
    // overwrite its message), the others stay pending on their streams.
    halError first = HAL_SUCCESS;
    for (const auto& stream : live) {
        if (first == HAL_SUCCESS) {
            first = stream->synchronize();
        } else {
            stream->waitIdle();
        }
    }
    for (const auto& stream : retiring) stream->waitIdle();
    reapRetiredStreams(device, false);
    return first;
}

halError deviceCanAccessPeer(halPluginDevice device, halPluginDevice peer, int* canAccess) {
    ze_bool_t reaches = 0;
    if (device->driver == peer->driver) {
        POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceCanAccessPeer, device->device, peer->device, &reaches);
    }
    *canAccess = reaches != 0 ? 1 : 0;
    return HAL_SUCCESS;
}

halError deviceEnablePeerAccess(halPluginDevice device, halPluginDevice peer) {
    int canAccess = 0;
    if (halError error = deviceCanAccessPeer(device, peer, &canAccess); error != HAL_SUCCESS) {
        return error;
    }
    if (canAccess == 0) {
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED,
                            "Level Zero device '%s' cannot access the memory of '%s' "
                            "(zeDeviceCanAccessPeer, or another driver)",
                            device->properties.name, peer->properties.name);
    }
    return HAL_SUCCESS;
}

halError deviceDisablePeerAccess(halPluginDevice /*device*/, halPluginDevice /*peer*/) {
    return HAL_SUCCESS;
}

}  // namespace polyhal::level_zero
