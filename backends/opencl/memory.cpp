// Memory model: device memory is OpenCL shared virtual memory (clSVMAlloc), so a device pointer
// is an ordinary pointer value, as with every other backend: the pool can carve it into pieces
// and pass them around, and copies, fills and kernel arguments take it directly.
//
// - Device memory: coarse-grain SVM buffers (the device-local kind), or fine-grain ones on a
//   device with fine-grain system SVM, where the host may dereference them (see device.hpp).
// - Host memory (memAllocHost): fine-grain SVM buffers where the device has them, so kernels can
//   use it too; otherwise aligned host memory.
// - Managed memory (memAllocManaged): fine-grain SVM buffers, offered only where the device has
//   them.
// - Copies of every kind use clEnqueueSVMMemcpy and fills clEnqueueSVMMemFill, which accept SVM
//   and plain host pointers alike, so host-to-host copies are in stream order too.
#include <cstdint>
#include <cstdlib>

#include "device.hpp"
#include "engine/svm_registry.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "stream.hpp"

namespace polyhal::opencl {

namespace {

constexpr size_t kAlignment = 256;  // what the plugin ABI promises for device memory

// clSVMAlloc only aligns as far as every device of the context supports (128 bytes on PoCL):
// below 256 the allocation is made larger by the difference and handed out from its first
// 256-byte boundary; the registry remembers the base for clSVMFree.
halError allocateSvm(const Device& device, cl_svm_mem_flags flags, size_t size, void** ptr) {
    const size_t alignment = device.platform().svmAlignment;
    const size_t slack = kAlignment - alignment;
    if (size > device.maxAllocationSize() || slack > device.maxAllocationSize() - size) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY,
                            "clSVMAlloc: %zu bytes exceed CL_DEVICE_MAX_MEM_ALLOC_SIZE (%llu) "
                            "of OpenCL device '%s'",
                            size, static_cast<unsigned long long>(device.maxAllocationSize()),
                            device.name().c_str());
    }
    void* base = clSVMAlloc(device.context(), flags, size + slack, static_cast<cl_uint>(alignment));
    if (base == nullptr) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY,
                            "clSVMAlloc returned NULL for %zu bytes on OpenCL device '%s'", size,
                            device.name().c_str());
    }
    const auto address = reinterpret_cast<std::uintptr_t>(base);
    void* start = reinterpret_cast<void*>((address + kAlignment - 1) / kAlignment * kAlignment);
    try {
        device.platform().svm.add(start, size, base);
    } catch (...) {
        clSVMFree(device.context(), base);
        throw;
    }
    *ptr = start;
    return HAL_SUCCESS;
}

void freeSvm(const Device& device, void* ptr) {
    clSVMFree(device.context(), device.platform().svm.remove(ptr));
}

}  // namespace

halError memAllocDevice(halPluginDevice device, size_t size, void** ptr) {
    const Device& owner = plugin::fromHandle<Device>(device);
    const cl_svm_mem_flags flags =
        CL_MEM_READ_WRITE | (owner.hostAccessible() ? CL_MEM_SVM_FINE_GRAIN_BUFFER : 0);
    return allocateSvm(owner, flags, size, ptr);
}

halError memFreeDevice(halPluginDevice device, void* ptr) {
    freeSvm(plugin::fromHandle<Device>(device), ptr);
    return HAL_SUCCESS;
}

halError memAllocHost(halPluginDevice device, size_t size, void** ptr) {
    const Device& owner = plugin::fromHandle<Device>(device);
    if (owner.fineGrainBuffers()) {
        return allocateSvm(owner, CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, size, ptr);
    }
    // aligned_alloc wants a multiple of the alignment.
    void* memory =
        std::aligned_alloc(kAlignment, (size + kAlignment - 1) / kAlignment * kAlignment);
    if (memory == nullptr) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY,
                            "aligned_alloc failed for %zu bytes of host memory", size);
    }
    *ptr = memory;
    return HAL_SUCCESS;
}

halError memFreeHost(halPluginDevice device, void* ptr) {
    const Device& owner = plugin::fromHandle<Device>(device);
    if (owner.fineGrainBuffers()) {
        freeSvm(owner, ptr);
    } else {
        std::free(ptr);
    }
    return HAL_SUCCESS;
}

// Managed memory is a fine-grain SVM buffer: one pointer the host dereferences and kernels,
// copies and fills take (HAL_DEVICE_CAP_MANAGED_MEMORY only where the device has such buffers).
halError memAllocManaged(halPluginDevice device, size_t size, void** ptr) {
    return allocateSvm(plugin::fromHandle<Device>(device),
                       CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER, size, ptr);
}

halError memFreeManaged(halPluginDevice device, void* ptr) {
    freeSvm(plugin::fromHandle<Device>(device), ptr);
    return HAL_SUCCESS;
}

halError memcpyAsync(halPluginStream stream, void* dst, const void* src, size_t count,
                     halMemcpyKind /*kind*/) {
    Stream& self = plugin::fromHandle<Stream>(stream);
    return self.submit([&](cl_event* last) {
        return checkCall(
            clEnqueueSVMMemcpy(self.queue(), CL_FALSE, dst, src, count, 0, nullptr, last),
            "clEnqueueSVMMemcpy");
    });
}

halError memsetAsync(halPluginStream stream, void* dst, unsigned char value, size_t count) {
    Stream& self = plugin::fromHandle<Stream>(stream);
    return self.submit([&](cl_event* last) {
        return checkCall(
            clEnqueueSVMMemFill(self.queue(), dst, &value, sizeof value, count, 0, nullptr, last),
            "clEnqueueSVMMemFill");
    });
}

}  // namespace polyhal::opencl
