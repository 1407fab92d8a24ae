// Drivers, contexts and devices.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_DEVICE_H_
#define POLYHAL_BACKENDS_LEVEL_ZERO_DEVICE_H_

#include <level_zero/ze_api.h>
#include <polyhal/plugin.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "event_pool.h"

namespace polyhal::level_zero {

// One Level Zero driver with the context all its devices share, so that memory and events of
// one device are usable by the others. Made by initialize(); kept until the process exits.
struct Driver {
    Driver(ze_driver_handle_t handle, ze_context_handle_t context);
    // Destroys the event slots, then the context (when initialize() fails after creating it).
    ~Driver();
    Driver(const Driver&) = delete;
    Driver& operator=(const Driver&) = delete;

    const ze_driver_handle_t handle;
    const ze_context_handle_t context;
    std::unique_ptr<EventSlotPool> events;
};

}  // namespace polyhal::level_zero

struct halPluginDevice_t {
    polyhal::level_zero::Driver* driver = nullptr;
    ze_device_handle_t device = nullptr;
    ze_device_properties_t properties{};          // queried as ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2
    ze_device_compute_properties_t compute{};
    uint64_t totalMemory = 0;
    uint32_t computeQueueOrdinal = 0;  // the command queue group streams submit to
    uint32_t computeQueueCount = 1;    // its engines; streams are spread over them
    std::atomic<uint32_t> streamsCreated{0};
    // A copy-only command queue group (copy engines) for the streams' copies; -1 when none.
    int copyQueueOrdinal = -1;
    uint32_t copyQueueCount = 0;
    std::atomic<uint32_t> copyListsCreated{0};
    // Every other device of the backend shares this device's context and can reach its memory
    // and be reached: copies between them are one zeCommandListAppendMemoryCopy.
    bool peerCopy = false;

    // Streams not yet destroyed, and destroyed streams whose work has not finished yet (their
    // command lists may only be destroyed once idle). Both guarded by streamsMutex.
    std::mutex streamsMutex;
    std::vector<std::shared_ptr<halPluginStream_t>> streams;
    std::vector<std::shared_ptr<halPluginStream_t>> retiringStreams;

    polyhal::level_zero::EventSlotPool& events() { return *driver->events; }
};

namespace polyhal::level_zero {

// Platform entries.
halError initialize();
halError deviceGetCount(int* count);
halError deviceOpen(int ordinal, halPluginDevice* device);
void deviceClose(halPluginDevice device);
halError deviceGetInfo(halPluginDevice device, halPluginDeviceInfo* info);
halError deviceSynchronize(halPluginDevice device);
// Level Zero has no switch for peer access: a device reaches a peer's memory of the same context
// whenever zeDeviceCanAccessPeer says it can, so enabling checks that and disabling does nothing.
halError deviceCanAccessPeer(halPluginDevice device, halPluginDevice peer, int* canAccess);
halError deviceEnablePeerAccess(halPluginDevice device, halPluginDevice peer);
halError deviceDisablePeerAccess(halPluginDevice device, halPluginDevice peer);

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_DEVICE_H_
