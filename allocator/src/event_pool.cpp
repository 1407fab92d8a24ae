// Recycled untimed events: creating one costs far more than reusing one (implementation).
#include "event_pool.hpp"

namespace polyhal::allocator {

EventPool::~EventPool() {
    clear();
}

void EventPool::clear() {
    std::vector<DeviceEvent> spare;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        spare.swap(spare_);
    }
    for (DeviceEvent event : spare) device_.destroyEvent(event);
}

halError EventPool::acquire(DeviceEvent* event) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!spare_.empty()) {
            *event = spare_.back();
            spare_.pop_back();
            return HAL_SUCCESS;
        }
    }
    return device_.createEvent(event);
}

void EventPool::release(DeviceEvent event) {
    std::lock_guard<std::mutex> lock(mutex_);
    spare_.push_back(event);
}

}  // namespace polyhal::allocator
