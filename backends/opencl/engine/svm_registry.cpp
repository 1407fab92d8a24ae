// The shared-virtual-memory allocations of one OpenCL context (see svm_registry.hpp).
#include "engine/svm_registry.hpp"

#include <iterator>
#include <mutex>

namespace polyhal::opencl {

void SvmRegistry::add(void* start, size_t size, void* base) {
    std::unique_lock lock(mutex_);
    allocations_.emplace(reinterpret_cast<std::uintptr_t>(start), Allocation{size, base});
    version_.fetch_add(1, std::memory_order_release);
}

void* SvmRegistry::remove(void* start) {
    std::unique_lock lock(mutex_);
    // Before the allocation goes: a LastHit of this version no longer vouches for it.
    version_.fetch_add(1, std::memory_order_release);
    auto found = allocations_.find(reinterpret_cast<std::uintptr_t>(start));
    void* base = found->second.base;
    allocations_.erase(found);
    return base;
}

const std::pair<const std::uintptr_t, SvmRegistry::Allocation>* SvmRegistry::find(
    std::uintptr_t address) const {
    auto after = allocations_.upper_bound(address);
    if (after == allocations_.begin()) return nullptr;
    const auto& entry = *std::prev(after);
    return address - entry.first < entry.second.size ? &entry : nullptr;
}

bool SvmRegistry::contains(const void* pointer, LastHit* lastHit) const {
    const auto address = reinterpret_cast<std::uintptr_t>(pointer);
    if (lastHit->version == version_.load(std::memory_order_acquire) &&
        address - lastHit->start < lastHit->size) {
        return true;
    }
    std::shared_lock lock(mutex_);
    const auto* entry = find(address);
    if (entry == nullptr) return false;
    *lastHit = LastHit{version_.load(std::memory_order_relaxed), entry->first, entry->second.size};
    return true;
}

}  // namespace polyhal::opencl
