// Memory entries. Device memory is host memory, so every copy kind is a plain memory copy run
// in stream order by the stream's worker, and "pinned" host memory is aligned host memory: for
// a CPU device no page is faster to reach than another.
#include <polyhal/plugin_support.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "device.hpp"
#include "engine/aligned_memory.hpp"
#include "entries.hpp"
#include "stream.hpp"

namespace polyhal::cpu {

halError memAllocDevice(halPluginDevice device, size_t size, void** ptr) {
    return plugin::fromHandle<Device>(device).memory().allocate(size, ptr);
}

halError memFreeDevice(halPluginDevice device, void* ptr) {
    return plugin::fromHandle<Device>(device).memory().release(ptr);
}

halError ipcMemGetHandle(halPluginDevice device, void* base, halPluginIpcHandle* handle) {
    return plugin::fromHandle<Device>(device).memory().exportAllocation(base, handle);
}

halError ipcMemOpenHandle(halPluginDevice device, const halPluginIpcHandle* handle, size_t size,
                          void** base) {
    return plugin::fromHandle<Device>(device).memory().openImport(*handle, size, base);
}

halError ipcMemCloseHandle(halPluginDevice device, void* base) {
    return plugin::fromHandle<Device>(device).memory().closeImport(base);
}

halError memAllocHost(halPluginDevice /*device*/, size_t size, void** ptr) {
    // More than the host has cannot succeed; saying so up front also keeps absurd sizes away
    // from allocators that abort on them (AddressSanitizer's) instead of failing.
    static const uint64_t physical = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                                     static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
    if (size > physical) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY,
                            "cannot allocate %zu bytes of host memory: the host has %llu", size,
                            static_cast<unsigned long long>(physical));
    }
    void* memory = allocateAligned(kDeviceMemoryAlignment, size);
    if (memory == nullptr) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory",
                            size);
    }
    *ptr = memory;
    return HAL_SUCCESS;
}

// All memory is host memory here, so registration has nothing to pin: the core's record of the
// range is all there is, and copies from it run as from any host memory.
halError memHostRegister(halPluginDevice /*device*/, void* /*ptr*/, size_t /*size*/) {
    return HAL_SUCCESS;
}

halError memHostUnregister(halPluginDevice /*device*/, void* /*ptr*/) {
    return HAL_SUCCESS;
}

// Managed memory is device memory, which the host reaches anyway; it counts against the device's
// capacity (POLYHAL_CPU_MEMORY) as device memory does.
halError memAllocManaged(halPluginDevice device, size_t size, void** ptr) {
    return plugin::fromHandle<Device>(device).memory().allocate(size, ptr);
}

halError memFreeManaged(halPluginDevice device, void* ptr) {
    return plugin::fromHandle<Device>(device).memory().release(ptr);
}

halError memGetInfo(halPluginDevice device, size_t* freeBytes, size_t* totalBytes) {
    DeviceMemory& memory = plugin::fromHandle<Device>(device).memory();
    const uint64_t capacity = memory.capacity();
    *totalBytes = static_cast<size_t>(capacity);
    *freeBytes = static_cast<size_t>(capacity - std::min(capacity, memory.used()));
    return HAL_SUCCESS;
}

halError memFreeHost(halPluginDevice /*device*/, void* ptr) {
    std::free(ptr);
    return HAL_SUCCESS;
}

halError memcpyAsync(halPluginStream stream, void* dst, const void* src, size_t count,
                     halMemcpyKind /*kind: all memory is host memory*/) {
    plugin::fromHandle<Stream>(stream).submit(CopyBytes{dst, src, count});
    return HAL_SUCCESS;
}

halError memcpy3DAsync(halPluginStream stream, const halMemcpy3DParams* params) {
    plugin::fromHandle<Stream>(stream).submit(makeCopyBox(*params));
    return HAL_SUCCESS;
}

halError memcpyPeerAsync(halPluginStream stream, void* dst, halPluginDevice /*dstDevice*/,
                         const void* src, halPluginDevice /*srcDevice*/, size_t count) {
    // Every CPU device's memory is host memory: a peer copy is an ordinary copy in stream order.
    plugin::fromHandle<Stream>(stream).submit(CopyBytes{dst, src, count});
    return HAL_SUCCESS;
}

halError memsetAsync(halPluginStream stream, void* dst, unsigned char value, size_t count) {
    plugin::fromHandle<Stream>(stream).submit(FillBytes{dst, count, value});
    return HAL_SUCCESS;
}

}  // namespace polyhal::cpu
