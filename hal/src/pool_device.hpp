// The stream-aware pool's view of a device, implemented over the plugin's dispatch table.
#ifndef POLYHAL_HAL_SRC_POOL_DEVICE_HPP_
#define POLYHAL_HAL_SRC_POOL_DEVICE_HPP_

#include <polyhal/allocator/device_interface.hpp>

namespace polyhal {

struct Device;

class PoolDevice final : public allocator::DeviceInterface {
  public:
    explicit PoolDevice(Device& device) : device_(device) {}

    halError allocateMemory(size_t size, void** ptr) override;
    halError freeMemory(void* ptr) override;
    halError createEvent(allocator::DeviceEvent* event) override;
    void destroyEvent(allocator::DeviceEvent event) override;
    halError recordEvent(allocator::DeviceEvent event, allocator::DeviceStream stream) override;
    halError queryEvent(allocator::DeviceEvent event) override;
    halError synchronizeEvent(allocator::DeviceEvent event) override;
    void setErrorMessage(const char* message) override;

  private:
    Device& device_;
};

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_POOL_DEVICE_HPP_
