// Translations between polyhal's terms and Level Zero's, free of driver calls.
#include "engine/translate.hpp"

#include <algorithm>
#include <cstring>

namespace polyhal::level_zero {

ze_command_queue_priority_t toQueuePriority(int priority) {
    if (priority < 0) return ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH;
    if (priority > 0) return ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_LOW;
    return ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
}

ze_group_count_t toGroupCount(halDim3 grid) {
    return ze_group_count_t{grid.x, grid.y, grid.z};
}

ze_module_format_t moduleFormatOf(const void* image, size_t size) {
    constexpr uint32_t kSpirvMagic = 0x07230203u;
    constexpr uint32_t kSpirvMagicSwapped = 0x03022307u;
    uint32_t word = 0;
    if (size < sizeof word) return ZE_MODULE_FORMAT_NATIVE;
    std::memcpy(&word, image, sizeof word);
    const bool spirv = word == kSpirvMagic || word == kSpirvMagicSwapped;
    return spirv ? ZE_MODULE_FORMAT_IL_SPIRV : ZE_MODULE_FORMAT_NATIVE;
}

const char* moduleBuildFlags(uint64_t totalMemory) {
    constexpr uint64_t k4GiB = uint64_t{4} << 30;
    return totalMemory > k4GiB ? "-ze-opt-greater-than-4GB-buffer-required" : "";
}

float elapsedMilliseconds(uint64_t startTicks, uint64_t endTicks, uint32_t validBits,
                          uint64_t ticksPerSecond) {
    const uint64_t mask = validBits >= 64 ? ~uint64_t{0} : (uint64_t{1} << validBits) - 1;
    const uint64_t forward = (endTicks - startTicks) & mask;
    // The timer wraps: a difference above half its range means the end came first.
    const bool endFirst = forward > mask / 2;
    const uint64_t ticks = endFirst ? ((startTicks - endTicks) & mask) : forward;
    const double ms = static_cast<double>(ticks) * 1e3 / static_cast<double>(ticksPerSecond);
    return static_cast<float>(endFirst ? -ms : ms);
}

int findComputeQueueGroup(const ze_command_queue_group_properties_t* groups, uint32_t count) {
    for (uint32_t i = 0; i < count; ++i) {
        if ((groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) != 0) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

int findCopyOnlyQueueGroup(const ze_command_queue_group_properties_t* groups, uint32_t count) {
    for (uint32_t i = 0; i < count; ++i) {
        const ze_command_queue_group_property_flags_t flags = groups[i].flags;
        if ((flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY) != 0 &&
            (flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) == 0) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

uint64_t deviceCapabilities(bool peerCopy) {
    return HAL_DEVICE_CAP_TIMING_EVENTS | HAL_DEVICE_CAP_HOST_FUNCTIONS | HAL_DEVICE_CAP_KERNELS |
           HAL_DEVICE_CAP_STREAM_PRIORITIES | HAL_DEVICE_CAP_NATIVE_HANDLES |
           (peerCopy ? HAL_DEVICE_CAP_PEER_COPY : 0);
}

void fillDeviceInfo(const ze_device_properties_t& properties,
                    const ze_device_compute_properties_t& compute, uint64_t totalMemory,
                    uint64_t capabilities, halPluginDeviceInfo* info) {
    static_assert(sizeof info->name >= ZE_MAX_DEVICE_NAME, "device names must fit");
    halPluginDeviceInfo filled{};
    filled.size = info->size;
    std::memcpy(filled.name, properties.name, ZE_MAX_DEVICE_NAME);
    filled.name[ZE_MAX_DEVICE_NAME - 1] = '\0';
    filled.totalMemory = totalMemory;
    filled.computeUnits =
        properties.numSlices * properties.numSubslicesPerSlice * properties.numEUsPerSubslice;
    filled.maxThreadsPerBlock = compute.maxTotalGroupSize;
    filled.maxSharedMemoryPerBlock = compute.maxSharedLocalMemory;
    filled.capabilities = capabilities;
    filled.leastStreamPriority = kLeastStreamPriority;
    filled.greatestStreamPriority = kGreatestStreamPriority;
    // A core built against an older, smaller struct gets the members it knows.
    std::memcpy(info, &filled, std::min(info->size, sizeof filled));
}

}  // namespace polyhal::level_zero
