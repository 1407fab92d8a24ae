// The Level Zero drivers and GPUs initialize() found, which every device shares.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_PLATFORM_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_PLATFORM_HPP_

#include <level_zero/ze_api.h>

#include <memory>
#include <vector>

#include "engine/event_pool.hpp"

namespace polyhal::level_zero {

// zeCommandListImmediateAppendCommandListsExp, of the driver extension
// ZE_experimental_immediate_command_list_append (Level Zero 1.9), which the 1.4 headers lack: it
// submits closed regular command lists in an immediate command list's order.
inline constexpr char kImmediateAppendExtension[] = "ZE_experimental_immediate_command_list_append";
using AppendCommandListsFn = ze_result_t(ZE_APICALL*)(ze_command_list_handle_t immediate,
                                                      uint32_t numCommandLists,
                                                      ze_command_list_handle_t* commandLists,
                                                      ze_event_handle_t signal,
                                                      uint32_t numWaitEvents,
                                                      ze_event_handle_t* waitEvents);

// One Level Zero driver with the context all its devices share, so that memory and events of
// one device are usable by the others. Made by initialize(); kept until the process exits.
class Driver {
  public:
    Driver(ze_driver_handle_t handle, ze_context_handle_t context);
    // Destroys the event slots, then the context (when initialize() fails after creating it).
    ~Driver();
    Driver(const Driver&) = delete;
    Driver& operator=(const Driver&) = delete;

    const ze_driver_handle_t handle;
    const ze_context_handle_t context;
    std::unique_ptr<EventSlotPool> events;
    // Null where the driver lacks kImmediateAppendExtension: its graphs are then replayed.
    AppendCommandListsFn appendCommandLists = nullptr;
};

struct Platform {
    struct Entry {
        Driver* driver;
        ze_device_handle_t device;
    };
    std::vector<std::unique_ptr<Driver>> drivers;  // those with at least one GPU
    std::vector<Entry> devices;                    // polyhal's ordinals, in driver order
};

// What initialize() found; valid once it has succeeded.
const Platform& platform();

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_PLATFORM_HPP_
