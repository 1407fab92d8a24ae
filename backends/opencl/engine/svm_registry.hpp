// The shared-virtual-memory allocations of one OpenCL context.
#ifndef POLYHAL_BACKENDS_OPENCL_ENGINE_SVM_REGISTRY_HPP_
#define POLYHAL_BACKENDS_OPENCL_ENGINE_SVM_REGISTRY_HPP_

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
    // Records `size` bytes handed out at `start`, inside the clSVMAlloc allocation at `base`.
    void add(void* start, size_t size, void* base);
    // Forgets the allocation handed out at `start`; returns its base for clSVMFree.
    void* remove(void* start);
    bool contains(const void* pointer) const;

  private:
    struct Allocation {
        size_t size;
        void* base;
    };
    mutable std::shared_mutex mutex_;
    std::map<std::uintptr_t, Allocation> allocations_;  // by start address
};

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_ENGINE_SVM_REGISTRY_HPP_
