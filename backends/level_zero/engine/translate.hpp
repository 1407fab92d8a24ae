// Pure translations between polyhal's terms and Level Zero's, kept free of driver calls so unit
// tests can check them on any machine.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_TRANSLATE_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_TRANSLATE_HPP_

#include <level_zero/ze_api.h>
#include <polyhal/plugin.h>

#include <cstddef>
#include <cstdint>

namespace polyhal::level_zero {

// Stream priorities: Level Zero has three levels, so polyhal's range is 1 (least, LOW) to -1
// (greatest, HIGH) and the default priority 0 is NORMAL.
inline constexpr int kLeastStreamPriority = 1;
inline constexpr int kGreatestStreamPriority = -1;

// A driver's structure of type `type`, all else zero, ready to be filled.
template <typename Properties>
Properties describedAs(ze_structure_type_t type) {
    Properties properties{};
    properties.stype = type;
    return properties;
}

// `priority` is within [kGreatestStreamPriority, kLeastStreamPriority] (the core clamps it).
ze_command_queue_priority_t toQueuePriority(int priority);

// halLaunchKernel's grid counts blocks (work-groups), as Level Zero's group count does.
ze_group_count_t toGroupCount(halDim3 grid);

// SPIR-V (recognised by its magic number in either byte order) is compiled by the driver;
// anything else is handed over as a native device binary, which the driver validates.
ze_module_format_t moduleFormatOf(const void* image, size_t size);

// The build flags of a module for a device with `totalMemory` bytes. A kernel can address an
// allocation above 4 GB only when built for it, and such allocations exist on any device with
// more memory than that (memAllocDevice relaxes the single-allocation limit).
const char* moduleBuildFlags(uint64_t totalMemory);

// Milliseconds between two readings of a device timer that counts `ticksPerSecond` and wraps
// after `validBits` bits. An end reading taken before the start gives a negative time.
float elapsedMilliseconds(uint64_t startTicks, uint64_t endTicks, uint32_t validBits,
                          uint64_t ticksPerSecond);

// Index of the first command queue group that accepts compute work, or -1 when none does.
int findComputeQueueGroup(const ze_command_queue_group_properties_t* groups, uint32_t count);

// Index of the first command queue group that copies but does not compute (a copy engine), or
// -1 when there is none.
int findCopyOnlyQueueGroup(const ze_command_queue_group_properties_t* groups, uint32_t count);

// The capabilities of a Level Zero device through this backend; `peerCopy` when it can copy
// to and from every other device of the backend directly.
uint64_t deviceCapabilities(bool peerCopy);

// Fills `info` from the driver's description of a device, no further than info->size (the
// size of the core's struct). `properties` must have been queried with
// ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2.
void fillDeviceInfo(const ze_device_properties_t& properties,
                    const ze_device_compute_properties_t& compute, uint64_t totalMemory,
                    uint64_t capabilities, halPluginDeviceInfo* info);

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_TRANSLATE_HPP_
