// The device: here your runtime's device and context handles would live. The template's device
// is the host: its memory is host memory and its streams are host threads.
#ifndef POLYHAL_TEMPLATE_DEVICE_HPP_
#define POLYHAL_TEMPLATE_DEVICE_HPP_

#include <polyhal/plugin.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/command_queue.hpp"

namespace polyhal_template {

// The launch limits deviceGetInfo reports: the core refuses larger launches.
constexpr uint32_t kMaxThreadsPerBlock = 1024;
constexpr uint64_t kMaxSharedMemoryPerBlock = 48 * 1024;

struct Device {
    using Handle = halPluginDevice;

    uint64_t totalMemory = 0;  // the budget memAllocDevice enforces, as a real device's size

    std::mutex mutex;  // guards everything below
    // The queue of every stream whose worker still runs: a destroyed stream's worker finishes
    // its queued work first, and deviceSynchronize waits for it too.
    std::vector<std::shared_ptr<CommandQueue>> queues;
    std::condition_variable workerExited;
    // Device memory handed out: each allocation's size by its address, and their sum.
    std::map<uintptr_t, size_t> allocations;
    uint64_t memoryInUse = 0;
    // Failures of destroyed streams whose workers have exited, for deviceSynchronize to report.
    std::vector<std::string> unreportedFailures;
};

// The host's memory in bytes (0 if unknown): the template device's size.
uint64_t physicalMemory();

// Does [address, address + bytes) lie within one allocation of `device`? (memory.cpp)
bool inDeviceMemory(Device& device, uint64_t address, uint64_t bytes);

}  // namespace polyhal_template

#endif  // POLYHAL_TEMPLATE_DEVICE_HPP_
