// The shared-virtual-memory allocations of one OpenCL context.
#ifndef POLYHAL_BACKENDS_OPENCL_ENGINE_SVM_REGISTRY_HPP_
#define POLYHAL_BACKENDS_OPENCL_ENGINE_SVM_REGISTRY_HPP_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <shared_mutex>

namespace polyhal::opencl {

// Kernel arguments arrive as bytes; a pointer-sized argument that points into one of these
// allocations (anywhere inside, since the pool hands out pieces of larger segments) is passed to
// OpenCL with clSetKernelArgSVMPointer, every other argument by value. Thread-safe.
class SvmRegistry {
  public:
    // The allocation a caller found last, valid while the registry is unchanged: launches pass
    // the same buffers again and again, and checking the remembered one takes no lock. Each
    // caller keeps its own (one per kernel, under the kernel's launch lock).
    struct LastHit {
        uint64_t version = 0;  // 0: none yet (the registry's versions start at 1)
        std::uintptr_t start = 0;
        size_t size = 0;
    };

    // Records `size` bytes handed out at `start`, inside the clSVMAlloc allocation at `base`.
    void add(void* start, size_t size, void* base);
    // Forgets the allocation handed out at `start`; returns its base for clSVMFree.
    void* remove(void* start);
    // Does `pointer` point into one of the allocations? Answers from `lastHit` where it can,
    // and remembers a new hit there.
    bool contains(const void* pointer, LastHit* lastHit) const;

  private:
    struct Allocation {
        size_t size;
        void* base;
    };
    // The allocation of `address`, if any. Lock held.
    const std::pair<const std::uintptr_t, Allocation>* find(std::uintptr_t address) const;

    mutable std::shared_mutex mutex_;
    std::map<std::uintptr_t, Allocation> allocations_;  // by start address
    std::atomic<uint64_t> version_{1};                  // raised by every add and remove
};

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_ENGINE_SVM_REGISTRY_HPP_
