// The Level Zero drivers and GPUs initialize() found, which every device shares.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_PLATFORM_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_PLATFORM_HPP_

#include <level_zero/ze_api.h>

#include <memory>
#include <mutex>
#include <vector>

#include "engine/event_pool.hpp"
#include "engine/ipc_exports.hpp"
#include "symbols.hpp"

namespace polyhal::level_zero {

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
    IpcExports ipcExports;  // of device allocations in `context`
    // Whether the loader hands out handles of its own for the driver's (with more than one driver
    // installed, or ZE_ENABLE_LOADER_INTERCEPT); set by initialize().
    bool loaderWrapsHandles = false;

    // Whether the driver offers ZE_IMMEDIATE_COMMAND_LIST_APPEND_EXP_NAME and the loader exports
    // its function; set by initialize(). Without it, graphs are replayed, and
    // commandListSubmissionMissing() says why.
    bool submitsCommandLists() const { return submitsCommandLists_; }
    const char* commandListSubmissionMissing() const;
    // Submits the closed regular lists `lists` in `immediate`'s order, `signal` signalling once
    // they have run: zeCommandListImmediateAppendCommandListsExp.
    ze_result_t submitCommandLists(ze_command_list_handle_t immediate,
                                   std::vector<ze_command_list_handle_t>& lists,
                                   ze_event_handle_t signal) const;
    void findCommandListSubmission();

    // zeCommandListCreate, zeCommandListCreateImmediate and zeCommandListDestroy, one at a time.
    // Where the loader wraps handles, its destroy frees the driver's list and only then drops
    // its wrapper, found by the driver's handle (oneapi-src/level-zero
    // source/loader/ze_ldrddi.cpp, zeCommandListDestroy); a list created meanwhile on another
    // thread at the freed address is given that wrapper, which the destroy then frees.
    ze_result_t createCommandList(ze_device_handle_t device, const ze_command_list_desc_t& desc,
                                  ze_command_list_handle_t* list) const;
    ze_result_t createImmediateCommandList(ze_device_handle_t device,
                                           const ze_command_queue_desc_t& desc,
                                           ze_command_list_handle_t* list) const;
    ze_result_t destroyCommandList(ze_command_list_handle_t list) const;

  private:
    mutable std::mutex commandListLifetimes_;  // see createCommandList
    bool offersImmediateAppend_ = false;
    bool submitsCommandLists_ = false;
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
