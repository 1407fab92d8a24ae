// The core's objects behind the public handles. Each knows its device, and through it the
// backend's dispatch table, so a call dispatches with no lookup.
#ifndef POLYHAL_HAL_SRC_OBJECTS_HPP_
#define POLYHAL_HAL_SRC_OBJECTS_HPP_

#include <polyhal/plugin.h>
#include <polyhal/allocator/event_clock.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <string>

#include "backend.hpp"

namespace polyhal {

struct Device;

}  // namespace polyhal

struct halStream_t {
    polyhal::Device* device;
    halPluginStream native;
    int priority;
    polyhal::allocator::Stream* poolStream;  // the pool's clock for this stream
};

struct halEvent_t {
    polyhal::Device* device;
    halPluginEvent native;
    uint32_t flags;
    std::atomic<bool> recorded{false};
    polyhal::allocator::EventClock clock;  // what the latest record captured
};

struct halFunction_t {
    polyhal::Device* device;
    halModule_t* module;
    halPluginFunction native;
    const char* name = nullptr;  // its key in module->functions, which lives as long as it does
};

struct halModule_t {
    polyhal::Device* device;
    halPluginModule native;
    std::mutex mutex;
    // One handle per kernel name, so repeated lookups return the same halFunction.
    std::map<std::string, halFunction_t*> functions;
};

#endif  // POLYHAL_HAL_SRC_OBJECTS_HPP_
