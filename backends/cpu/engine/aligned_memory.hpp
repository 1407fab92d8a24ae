// Aligned host allocations: device memory, pinned host memory and kernel shared memory are all
// plain host memory on this backend.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_ALIGNED_MEMORY_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_ALIGNED_MEMORY_HPP_

#include <cstddef>
#include <cstdlib>

namespace polyhal::cpu {

constexpr size_t kDeviceMemoryAlignment = 256;  // what plugin.h promises for device memory
constexpr size_t kSharedMemoryAlignment = 64;   // what cpu_kernel.h promises: a cache line

// `size` bytes aligned to `alignment` (a power of two, at least sizeof(void*)), released with
// std::free; nullptr when the host is out of memory.
inline void* allocateAligned(size_t alignment, size_t size) {
    void* memory = nullptr;
    return posix_memalign(&memory, alignment, size == 0 ? 1 : size) == 0 ? memory : nullptr;
}

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_ALIGNED_MEMORY_HPP_
