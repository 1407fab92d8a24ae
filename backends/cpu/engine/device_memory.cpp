// Implements device_memory.hpp.
#include "engine/device_memory.hpp"

#include <polyhal/plugin_support.hpp>

#include <cstdlib>

#include "engine/aligned_memory.hpp"

namespace polyhal::cpu {

DeviceMemory::~DeviceMemory() {
    for (const auto& block : blocks_) {
        if (block.second.shared == nullptr) std::free(block.first);
    }
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
    Block block{charged, nullptr};
    void* memory = nullptr;
    // A shared-memory file where one can be had; aligned host memory otherwise (the
    // allocation then cannot be exported, which exportAllocation says).
    if (size >= kShareableSize && SharedMemory::create(charged, &block.shared) == HAL_SUCCESS) {
        memory = block.shared->data();
    } else {
        memory = allocateAligned(kDeviceMemoryAlignment, charged);
    }
    const bool shared = block.shared != nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    if (memory == nullptr) {
        used_ -= charged;
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY,
                            "cannot allocate %zu bytes of device memory: the host has no "
                            "memory left",
                            size);
    }
    try {
        blocks_.emplace(memory, std::move(block));
    } catch (...) {
        used_ -= charged;
        if (!shared) std::free(memory);  // a shared-memory file went with the failed node
        throw;
    }
    *ptr = memory;
    return HAL_SUCCESS;
}

halError DeviceMemory::release(void* ptr) {
    Block released;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto block = blocks_.find(ptr);
        if (block == blocks_.end()) {
            return plugin::fail(HAL_ERROR_INVALID_VALUE,
                                "%p is not device memory allocated on this device", ptr);
        }
        used_ -= block->second.charged;
        released = std::move(block->second);
        blocks_.erase(block);
    }
    if (released.shared == nullptr) std::free(ptr);
    return HAL_SUCCESS;  // a shared-memory file is unmapped and closed as `released` goes
}

uint64_t DeviceMemory::used() {
    std::lock_guard lock(mutex_);
    return used_;
}

halError DeviceMemory::exportAllocation(void* ptr, halPluginIpcHandle* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto block = blocks_.find(ptr);
    if (block == blocks_.end()) {
        return plugin::fail(HAL_ERROR_INVALID_VALUE,
                            "%p is not device memory allocated on this device", ptr);
    }
    if (block->second.shared == nullptr) {
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED,
                            "the allocation at %p is not shareable: it is plain host memory "
                            "(smaller than %zu bytes, or no shared-memory file could be made "
                            "when it was allocated)",
                            ptr, kShareableSize);
    }
    block->second.shared->exportTo(handle);
    return HAL_SUCCESS;
}

halError DeviceMemory::openImport(const halPluginIpcHandle& handle, size_t size, void** ptr) {
    std::unique_ptr<SharedMemory> opened;
    if (halError e = SharedMemory::open(SharedMemory::nameIn(handle), size, &opened)) return e;
    void* data = opened->data();
    std::lock_guard<std::mutex> lock(mutex_);
    imports_.emplace(data, std::move(opened));
    *ptr = data;
    return HAL_SUCCESS;
}

halError DeviceMemory::closeImport(void* ptr) {
    std::unique_ptr<SharedMemory> closed;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto import = imports_.find(ptr);
    if (import == imports_.end()) {
        return plugin::fail(HAL_ERROR_INVALID_VALUE, "%p is not memory opened from another process",
                            ptr);
    }
    closed = std::move(import->second);
    imports_.erase(import);
    return HAL_SUCCESS;
}

}  // namespace polyhal::cpu
