// The stream-aware pool's view of a device, implemented over the plugin's dispatch table.
#ifndef POLYHAL_HAL_SRC_POOL_DEVICE_HPP_
#define POLYHAL_HAL_SRC_POOL_DEVICE_HPP_

#include <polyhal/allocator/device_interface.hpp>

#include <atomic>
#include <cstdint>

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

    // False when `pointer` lies outside every segment the pool has reserved so far, so that it
    // cannot be a pool block: answered without a lock, locating a host pointer or another
    // device's asks this pool nothing. (The range only grows; true does not mean it is one.)
    bool mayHold(const void* pointer) const {
        const auto address = reinterpret_cast<std::uintptr_t>(pointer);
        return address >= lowest_.load(std::memory_order_acquire) &&
               address < highest_.load(std::memory_order_acquire);
    }

  private:
    Device& device_;
    // The span of the segments reserved so far, widened before the pool hands any out.
    std::atomic<std::uintptr_t> lowest_{UINTPTR_MAX};
    std::atomic<std::uintptr_t> highest_{0};
};

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_POOL_DEVICE_HPP_
