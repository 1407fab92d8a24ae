#include "allocation_registry.hpp"

#include <mutex>

namespace polyhal {

void AllocationRegistry::insert(const Allocation& allocation) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    byBase_[allocation.base] = allocation;
}

std::optional<Allocation> AllocationRegistry::eraseExact(const void* ptr, bool host) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    auto it = byBase_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == byBase_.end() || it->second.host != host) return std::nullopt;
    Allocation allocation = it->second;
    byBase_.erase(it);
    return allocation;
}

std::optional<Allocation> AllocationRegistry::find(const void* ptr) const {
    const auto address = reinterpret_cast<uintptr_t>(ptr);
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = byBase_.upper_bound(address);
    if (it == byBase_.begin()) return std::nullopt;
    --it;
    if (address - it->second.base >= it->second.size) return std::nullopt;
    return it->second;
}

std::vector<Allocation> AllocationRegistry::eraseDevice(const Device* device) {
    std::vector<Allocation> removed;
    std::unique_lock<std::shared_mutex> lock(mutex_);
    for (auto it = byBase_.begin(); it != byBase_.end();) {
        if (it->second.device == device && !it->second.host) {
            removed.push_back(it->second);
            it = byBase_.erase(it);
        } else {
            ++it;
        }
    }
    return removed;
}

}  // namespace polyhal
