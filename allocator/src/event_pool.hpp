// Recycled untimed events: creating one costs far more than reusing one.
#ifndef POLYHAL_ALLOCATOR_EVENT_POOL_HPP_
#define POLYHAL_ALLOCATOR_EVENT_POOL_HPP_

#include <polyhal/allocator/device_interface.hpp>

#include <mutex>
#include <vector>

namespace polyhal::allocator {

class EventPool {
  public:
    explicit EventPool(DeviceInterface& device) : device_(device) {}
    ~EventPool();

    halError acquire(DeviceEvent* event);
    // Returns an event whose last recording has finished (or that was never recorded).
    void release(DeviceEvent event);
    // Destroys the spare events (a device reset: the vendor's reset would destroy them anyway).
    void clear();

  private:
    DeviceInterface& device_;
    std::mutex mutex_;
    std::vector<DeviceEvent> spare_;
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_EVENT_POOL_HPP_
