// The only way the stream-aware pool reaches a device. The core implements it over the plugin
// dispatch table (memAllocDevice, memFreeDevice, eventCreate with HAL_EVENT_DISABLE_TIMING,
// eventRecord, eventQuery, eventSynchronize, eventDestroy); unit tests implement it in-process.
#ifndef POLYHAL_ALLOCATOR_DEVICE_INTERFACE_HPP_
#define POLYHAL_ALLOCATOR_DEVICE_INTERFACE_HPP_

#include <polyhal/hal.h>

#include <cstddef>

namespace polyhal::allocator {

// Backend objects, opaque to the pool (halPluginStream / halPluginEvent in the core).
using DeviceStream = void*;
using DeviceEvent = void*;

// Every method may be called from any thread at once. The pool never holds its own lock while
// calling one, so an implementation may block (synchronizeEvent) or be slow (allocateMemory).
class DeviceInterface {
  public:
    virtual ~DeviceInterface() = default;

    // Device memory of `size` bytes aligned to at least 256 bytes. Exhausted:
    // HAL_ERROR_OUT_OF_MEMORY. Any other error is returned to the caller of the pool unchanged,
    // so the implementation sets its message as for any failing call.
    virtual halError allocateMemory(size_t size, void** ptr) = 0;
    // Memory from allocateMemory; the pool guarantees that no submitted work still uses it.
    virtual halError freeMemory(void* ptr) = 0;

    // An event without timing, used only to observe where a stream has got to.
    virtual halError createEvent(DeviceEvent* event) = 0;
    virtual void destroyEvent(DeviceEvent event) = 0;
    // Captures the work submitted to `stream` so far.
    virtual halError recordEvent(DeviceEvent event, DeviceStream stream) = 0;
    // HAL_SUCCESS when the captured work has finished, HAL_ERROR_NOT_READY while it runs. Any
    // other result is treated as "not known to be finished".
    virtual halError queryEvent(DeviceEvent event) = 0;
    // Blocks until the captured work has finished.
    virtual halError synchronizeEvent(DeviceEvent event) = 0;

    // Sets the calling thread's error detail for an error the pool itself returns (out of memory,
    // invalid free). The core forwards it to halGetLastErrorMessage().
    virtual void setErrorMessage(const char* message) = 0;
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_DEVICE_INTERFACE_HPP_
