// The process-wide state: loaded backends, devices, handle arenas. Created once by the first
// call (halInit or any other), never destroyed: plugin threads may outlive static destructors.
#ifndef POLYHAL_HAL_SRC_RUNTIME_HPP_
#define POLYHAL_HAL_SRC_RUNTIME_HPP_

#include <polyhal/hal.h>

#include <atomic>
#include <memory>
#include <vector>

#include "address_ranges.hpp"
#include "backend.hpp"
#include "device.hpp"
#include "handle_arena.hpp"
#include "objects.hpp"

namespace polyhal {

struct Runtime {
    Runtime();

    std::vector<std::unique_ptr<Backend>> backends;
    std::vector<std::unique_ptr<Device>> devices;

    HandleArena<halStream_t> streams;
    HandleArena<halEvent_t> events;
    HandleArena<halModule_t> modules;
    HandleArena<halFunction_t> functions;
    HandleArena<halGraph_t> graphs;
    AddressRanges hostAllocations;
    AddressRanges ipcImports;          // halIpcOpenMemHandle's mappings
    AddressRanges hostRegistrations;   // halHostRegister's ranges
    AddressRanges managedAllocations;  // halMallocManaged's
};

namespace detail {
extern std::atomic<bool> g_ready;
extern Runtime* g_runtime;
halError initializeSlow();
}  // namespace detail

// HAL_SUCCESS once the runtime is up; otherwise the initialisation error (whose message is
// restored for the calling thread). The fast path is one acquire load.
inline halError ensureInitialized() {
    if (__builtin_expect(detail::g_ready.load(std::memory_order_acquire), 1)) return HAL_SUCCESS;
    return detail::initializeSlow();
}

// Valid after ensureInitialized() returned HAL_SUCCESS.
inline Runtime& runtime() {
    return *detail::g_runtime;
}

// The calling thread's current device number.
int& currentDeviceOrdinal();

inline Device* currentDevice() {
    return runtime().devices[currentDeviceOrdinal()].get();
}

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_RUNTIME_HPP_
