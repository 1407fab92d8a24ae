// A device's memory: aligned host memory, charged against the device's capacity
// (POLYHAL_CPU_MEMORY) so that exhaustion behaves as on a real device.
#ifndef POLYHAL_CPU_DEVICE_MEMORY_H_
#define POLYHAL_CPU_DEVICE_MEMORY_H_

#include <polyhal/hal.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace polyhal::cpu {

class DeviceMemory {
  public:
    explicit DeviceMemory(uint64_t capacity) : capacity_(capacity) {}
    // Frees what the application left allocated.
    ~DeviceMemory();
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;

    uint64_t capacity() const { return capacity_; }
    // Bytes charged by live allocations.
    uint64_t used();

    // `size` bytes aligned to kDeviceMemoryAlignment. Beyond the remaining capacity:
    // HAL_ERROR_OUT_OF_MEMORY, with the requested and available bytes in the message.
    // Throws std::bad_alloc when the bookkeeping cannot grow (nothing is charged then).
    halError allocate(size_t size, void** ptr);
    // HAL_ERROR_INVALID_VALUE for a pointer allocate() did not return.
    halError release(void* ptr);

  private:
    const uint64_t capacity_;
    std::mutex mutex_;
    uint64_t used_ = 0;
    std::unordered_map<void*, uint64_t> blocks_;  // pointer -> bytes charged
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_CPU_DEVICE_MEMORY_H_
