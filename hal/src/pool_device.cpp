// Implements pool_device.hpp.
#include "pool_device.hpp"

#include "api.hpp"
#include "device.hpp"

namespace polyhal {

halError PoolDevice::allocateMemory(size_t size, void** ptr) {
    if (halError e = checked(device_.vtable->memAllocDevice(device_.native, size, ptr), &device_,
                             "allocating a pool segment")) {
        return e;
    }
    check::segmentReserved(*ptr, size);
    return HAL_SUCCESS;
}

halError PoolDevice::freeMemory(void* ptr) {
    check::segmentReleased(ptr);
    return checked(device_.vtable->memFreeDevice(device_.native, ptr), &device_,
                   "releasing a pool segment");
}

halError PoolDevice::createEvent(allocator::DeviceEvent* event) {
    halPluginEvent native = nullptr;
    const halError status =
        device_.vtable->eventCreate(device_.native, HAL_EVENT_DISABLE_TIMING, &native);
    *event = native;
    return checked(status, &device_, "creating a pool event");
}

void PoolDevice::destroyEvent(allocator::DeviceEvent event) {
    device_.vtable->eventDestroy(static_cast<halPluginEvent>(event));
}

halError PoolDevice::recordEvent(allocator::DeviceEvent event, allocator::DeviceStream stream) {
    return checked(device_.vtable->eventRecord(static_cast<halPluginEvent>(event),
                                               static_cast<halPluginStream>(stream)),
                   &device_, "recording a pool event");
}

halError PoolDevice::queryEvent(allocator::DeviceEvent event) {
    return checked(device_.vtable->eventQuery(static_cast<halPluginEvent>(event)), &device_,
                   "querying a pool event");
}

halError PoolDevice::synchronizeEvent(allocator::DeviceEvent event) {
    return checked(device_.vtable->eventSynchronize(static_cast<halPluginEvent>(event)), &device_,
                   "synchronizing a pool event");
}

void PoolDevice::setErrorMessage(const char* message) {
    setLastErrorMessage(message);
}

}  // namespace polyhal
