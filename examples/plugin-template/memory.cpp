// Memory: "device" memory is aligned host memory (HAL_DEVICE_CAP_HOST_ACCESSIBLE), copies and
// memsets are commands on the stream. With a real runtime, memAllocDevice would be cuMemAlloc,
// clSVMAlloc or zeMemAllocDevice, and the enqueues cuMemcpyAsync, clEnqueueSVMMemcpy, ...
// memAllocHost/memFreeHost (pinned memory) are optional and absent: the core then gives
// halMallocHost aligned host memory itself.
#include <cstdlib>
#include <cstring>
#include <memory>

#include "device.hpp"
#include "entries.hpp"
#include "stream.hpp"

namespace polyhal_template {

namespace {

constexpr size_t kAlignment = 256;  // what plugin.h asks of device memory

}  // namespace

// The device has a fixed size (totalMemory), like real device memory: a request beyond what is
// left is HAL_ERROR_OUT_OF_MEMORY, which lets polyhal's pool release cached memory and retry.
halError memAllocDevice(halPluginDevice deviceHandle, size_t size, void** ptr) {
    Device& device = fromHandle<Device>(deviceHandle);
    std::lock_guard<std::mutex> lock(device.mutex);
    if (size > device.totalMemory - device.memoryInUse) {
        return fail(HAL_ERROR_OUT_OF_MEMORY,
                    "memAllocDevice: %zu bytes requested, %llu of %llu bytes in use", size,
                    static_cast<unsigned long long>(device.memoryInUse),
                    static_cast<unsigned long long>(device.totalMemory));
    }
    // aligned_alloc wants a multiple of the alignment (no overflow: size <= totalMemory).
    const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
    std::unique_ptr<void, decltype(&std::free)> memory(std::aligned_alloc(kAlignment, rounded),
                                                       &std::free);
    if (memory == nullptr) {
        return fail(HAL_ERROR_OUT_OF_MEMORY, "aligned_alloc(%zu, %zu): out of host memory",
                    kAlignment, rounded);
    }
    device.allocations.emplace(reinterpret_cast<uintptr_t>(memory.get()), size);
    device.memoryInUse += size;
    *ptr = memory.release();
    return HAL_SUCCESS;
}

// The core passes only memory this device allocated, with no work still using it.
halError memFreeDevice(halPluginDevice deviceHandle, void* ptr) {
    Device& device = fromHandle<Device>(deviceHandle);
    std::lock_guard<std::mutex> lock(device.mutex);
    const auto allocation = device.allocations.find(reinterpret_cast<uintptr_t>(ptr));
    device.memoryInUse -= allocation->second;
    device.allocations.erase(allocation);
    std::free(ptr);
    return HAL_SUCCESS;
}

bool inDeviceMemory(Device& device, uint64_t address, uint64_t bytes) {
    std::lock_guard<std::mutex> lock(device.mutex);
    auto after = device.allocations.upper_bound(address);
    if (after == device.allocations.begin()) return false;
    const auto& [start, size] = *--after;
    return address - start <= size && bytes <= size - (address - start);
}

// Every kind is host to host here; a runtime picks its copy call by `kind`. Host memory must
// stay valid until the copy has run (the public API's rule), so the pointers are kept as they are.
halError memcpyAsync(halPluginStream stream, void* dst, const void* src, size_t count,
                     halMemcpyKind /*kind*/) {
    fromHandle<Stream>(stream).queue->submit([=] { std::memcpy(dst, src, count); });
    return HAL_SUCCESS;
}

halError memsetAsync(halPluginStream stream, void* dst, unsigned char value, size_t count) {
    fromHandle<Stream>(stream).queue->submit([=] { std::memset(dst, value, count); });
    return HAL_SUCCESS;
}

}  // namespace polyhal_template
