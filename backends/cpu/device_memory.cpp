#include "device_memory.h"

#include <polyhal/plugin_support.hpp>

#include <cstdlib>

#include "aligned_memory.h"

namespace polyhal::cpu {

DeviceMemory::~DeviceMemory() {
    for (const auto& block : blocks_) std::free(block.first);
}

halError DeviceMemory::allocate(size_t size, void** ptr) {
    // Charge whole alignment units: that is what the allocation really occupies.
    const uint64_t charged = (uint64_t{size} + kDeviceMemoryAlignment - 1) /
                             kDeviceMemoryAlignment * kDeviceMemoryAlignment;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const uint64_t available = capacity_ - used_;
        if (charged > available || charged < size) {
            return plugin::fail(HAL_ERROR_OUT_OF_MEMORY,
                                "cannot allocate %zu bytes of device memory: %llu of %llu "
                                "bytes available (capacity set by POLYHAL_CPU_MEMORY)",
                                size, static_cast<unsigned long long>(available),
                                static_cast<unsigned long long>(capacity_));
        }
        used_ += charged;  // reserved now; the host allocation happens outside the lock
    }
    void* memory = allocateAligned(kDeviceMemoryAlignment, charged);
    std::lock_guard<std::mutex> lock(mutex_);
    if (memory == nullptr) {
        used_ -= charged;
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY,
                            "cannot allocate %zu bytes of device memory: the host has no "
                            "memory left",
                            size);
    }
    try {
        blocks_.emplace(memory, charged);
    } catch (...) {
        used_ -= charged;
        std::free(memory);
        throw;
    }
    *ptr = memory;
    return HAL_SUCCESS;
}

halError DeviceMemory::release(void* ptr) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto block = blocks_.find(ptr);
        if (block == blocks_.end()) {
            return plugin::fail(HAL_ERROR_INVALID_VALUE,
                                "%p is not device memory allocated on this device", ptr);
        }
        used_ -= block->second;
        blocks_.erase(block);
    }
    std::free(ptr);
    return HAL_SUCCESS;
}

uint64_t DeviceMemory::used() {
    std::lock_guard lock(mutex_);
    return used_;
}

}  // namespace polyhal::cpu
