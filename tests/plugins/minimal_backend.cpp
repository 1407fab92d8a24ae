// The test_minimal backend's entries and table (what it is: minimal_backend.hpp).
#include "minimal_backend.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <polyhal/plugin_support.hpp>
#include <unordered_map>

using polyhal::plugin::fail;

namespace polyhal::test_minimal {
namespace {

struct Device {
    using Handle = halPluginDevice;
    std::mutex mutex;
    std::unordered_map<void*, size_t> allocations;  // guarded by mutex
    uint64_t used = 0;                              // guarded by mutex
};
struct Stream {
    using Handle = halPluginStream;
};
struct Event {
    using Handle = halPluginEvent;
};

constexpr uint64_t kCapacity = uint64_t{64} << 20;
constexpr size_t kAlignment = 256;

Device g_device;

halError initialize() {
    return HAL_SUCCESS;
}

halError deviceGetCount(int* count) {
    *count = 1;
    return HAL_SUCCESS;
}

halError deviceOpen(int ordinal, halPluginDevice* device) {
    if (ordinal != 0) {
        return fail(HAL_ERROR_INVALID_DEVICE, "test_minimal has one device, not %d", ordinal);
    }
    *device = plugin::toHandle(&g_device);
    return HAL_SUCCESS;
}

void deviceClose(halPluginDevice) {}

halError deviceGetInfo(halPluginDevice, halPluginDeviceInfo* info) {
    std::snprintf(info->name, sizeof info->name, "polyhal test_minimal device");
    info->totalMemory = kCapacity;
    info->computeUnits = 1;
    info->maxThreadsPerBlock = 1;
    info->maxSharedMemoryPerBlock = 0;
    info->capabilities = HAL_DEVICE_CAP_HOST_ACCESSIBLE;
    info->leastStreamPriority = 0;
    info->greatestStreamPriority = 0;
    return HAL_SUCCESS;
}

// Every operation completed when it was submitted: there is never anything to wait for.
halError deviceSynchronize(halPluginDevice) {
    return HAL_SUCCESS;
}
halError streamSynchronize(halPluginStream) {
    return HAL_SUCCESS;
}
halError streamQuery(halPluginStream) {
    return HAL_SUCCESS;
}
halError eventQuery(halPluginEvent) {
    return HAL_SUCCESS;
}
halError eventSynchronize(halPluginEvent) {
    return HAL_SUCCESS;
}

halError streamCreate(halPluginDevice, int, uint32_t, halPluginStream* stream) {
    *stream = plugin::toHandle(new (std::nothrow) Stream);
    return *stream != nullptr
               ? HAL_SUCCESS
               : fail(HAL_ERROR_OUT_OF_MEMORY, "test_minimal: no memory for a stream");
}

halError streamDestroy(halPluginStream stream) {
    delete &plugin::fromHandle<Stream>(stream);
    return HAL_SUCCESS;
}

halError streamWaitEvent(halPluginStream, halPluginEvent) {
    return HAL_SUCCESS;
}

halError eventCreate(halPluginDevice, uint32_t, halPluginEvent* event) {
    *event = plugin::toHandle(new (std::nothrow) Event);
    return *event != nullptr
               ? HAL_SUCCESS
               : fail(HAL_ERROR_OUT_OF_MEMORY, "test_minimal: no memory for an event");
}

halError eventDestroy(halPluginEvent event) {
    delete &plugin::fromHandle<Event>(event);
    return HAL_SUCCESS;
}

halError eventRecord(halPluginEvent, halPluginStream) {
    return HAL_SUCCESS;
}

halError memAllocDevice(halPluginDevice handle, size_t size, void** ptr) {
    Device& device = plugin::fromHandle<Device>(handle);
    std::lock_guard<std::mutex> lock(device.mutex);
    if (size > kCapacity - device.used) {
        return fail(HAL_ERROR_OUT_OF_MEMORY,
                    "test_minimal: cannot allocate %zu bytes, %llu of %llu bytes are free", size,
                    static_cast<unsigned long long>(kCapacity - device.used),
                    static_cast<unsigned long long>(kCapacity));
    }
    const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
    void* memory = std::aligned_alloc(kAlignment, rounded);
    if (memory == nullptr) {
        return fail(HAL_ERROR_OUT_OF_MEMORY, "test_minimal: aligned_alloc(%zu) failed", rounded);
    }
    try {
        device.allocations.emplace(memory, size);
    } catch (const std::bad_alloc&) {
        std::free(memory);
        return fail(HAL_ERROR_OUT_OF_MEMORY, "test_minimal: no memory to track an allocation");
    }
    device.used += size;
    *ptr = memory;
    return HAL_SUCCESS;
}

halError memFreeDevice(halPluginDevice handle, void* ptr) {
    Device& device = plugin::fromHandle<Device>(handle);
    std::lock_guard<std::mutex> lock(device.mutex);
    const auto allocation = device.allocations.find(ptr);
    if (allocation == device.allocations.end()) {
        return fail(HAL_ERROR_INVALID_VALUE, "test_minimal: %p is not an allocation", ptr);
    }
    device.used -= allocation->second;
    device.allocations.erase(allocation);
    std::free(ptr);
    return HAL_SUCCESS;
}

halError memcpyAsync(halPluginStream, void* dst, const void* src, size_t count, halMemcpyKind) {
    std::memmove(dst, src, count);
    return HAL_SUCCESS;
}

halError memsetAsync(halPluginStream, void* dst, unsigned char value, size_t count) {
    std::memset(dst, value, count);
    return HAL_SUCCESS;
}

POLYHAL_PLUGIN_DISPATCH_TABLE("test_minimal")

}  // namespace

const halPluginDispatchTable& fullTable() {
    static constexpr halPluginDispatchTable kTable = dispatchTable();
    return kTable;
}

}  // namespace polyhal::test_minimal
