// The shared-virtual-memory allocations of one OpenCL context (see svm_registry.hpp).
#include "engine/svm_registry.hpp"

#include <iterator>
#include <mutex>

namespace polyhal::opencl {

void SvmRegistry::add(void* start, size_t size, void* base) {
    std::unique_lock lock(mutex_);
    allocations_.emplace(reinterpret_cast<std::uintptr_t>(start), Allocation{size, base});
}

void* SvmRegistry::remove(void* start) {
    std::unique_lock lock(mutex_);
    auto found = allocations_.find(reinterpret_cast<std::uintptr_t>(start));
    void* base = found->second.base;
    allocations_.erase(found);
    return base;
}

bool SvmRegistry::contains(const void* pointer) const {
    const auto address = reinterpret_cast<std::uintptr_t>(pointer);
    std::shared_lock lock(mutex_);
    auto after = allocations_.upper_bound(address);
    if (after == allocations_.begin()) return false;
    const auto& [start, allocation] = *std::prev(after);
    return address - start < allocation.size;
}

}  // namespace polyhal::opencl
