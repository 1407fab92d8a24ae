// A Level Zero device as the plugin opens it: its properties, engines and streams.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_DEVICE_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_DEVICE_HPP_

#include <level_zero/ze_api.h>
#include <polyhal/plugin.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/event_pool.hpp"
#include "platform.hpp"

namespace polyhal::level_zero {

class Graph;
class Stream;

struct GraphDeleter {
    void operator()(Graph* graph) const;  // graph.cpp
};

class Device {
  public:
    using Handle = halPluginDevice;

    EventSlotPool& events() { return *driver->events; }

    Driver* driver = nullptr;
    ze_device_handle_t device = nullptr;
    ze_device_properties_t properties{};  // queried as ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2
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
    // Shared allocations (zeMemAllocShared) the host and this device load from and store to:
    // halMallocManaged's memory.
    bool sharedMemory = false;

    // Streams not yet destroyed, and destroyed streams whose work has not finished yet (their
    // command lists may only be destroyed once idle). Both guarded by streamsMutex.
    std::mutex streamsMutex;
    std::vector<std::shared_ptr<Stream>> streams;
    std::vector<std::shared_ptr<Stream>> retiringStreams;

    // Destroyed graphs with a launch still running (graph.cpp), guarded by graphsMutex.
    std::mutex graphsMutex;
    std::vector<std::unique_ptr<Graph, GraphDeleter>> retiringGraphs;
};

// Destroys the device's retired graphs whose runs have finished; with `wait`, waits for all.
void reapRetiredGraphs(Device& device, bool wait);

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_DEVICE_HPP_
