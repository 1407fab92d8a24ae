// A device's memory: host memory, charged against the device's capacity (POLYHAL_CPU_MEMORY)
// so that exhaustion behaves as on a real device. Allocations of kShareableSize bytes or more
// (every segment of polyhal's pool) are shared-memory files another process can map
// (halIpcGetMemHandle); smaller ones are aligned host memory, which is cheaper to make.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_DEVICE_MEMORY_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_DEVICE_MEMORY_HPP_

#include <polyhal/plugin.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "plugin_common/shared_memory.hpp"

namespace polyhal::cpu {

constexpr size_t kShareableSize = size_t{2} << 20;

class DeviceMemory {
  public:
    explicit DeviceMemory(uint64_t capacity) : capacity_(capacity) {}
    // Frees what the application left allocated or opened.
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

    // Names the allocation `ptr` (as allocate() returned it) for another process.
    // Errors: HAL_ERROR_INVALID_VALUE (not an allocation), HAL_ERROR_NOT_SUPPORTED (one made
    // without a shared-memory file: smaller than kShareableSize, or none could be had).
    halError exportAllocation(void* ptr, halPluginIpcHandle* handle);
    // Maps another process's allocation; not charged (the exporter's device pays for it).
    // Errors: as SharedMemory::open.
    halError openImport(const halPluginIpcHandle& handle, size_t size, void** ptr);
    // HAL_ERROR_INVALID_VALUE for a pointer openImport() did not return.
    halError closeImport(void* ptr);

  private:
    struct Block {
        uint64_t charged;
        std::unique_ptr<SharedMemory> shared;  // null: aligned host memory
    };

    const uint64_t capacity_;
    std::mutex mutex_;
    uint64_t used_ = 0;
    std::unordered_map<void*, Block> blocks_;
    std::unordered_map<void*, std::unique_ptr<SharedMemory>> imports_;
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_DEVICE_MEMORY_HPP_
