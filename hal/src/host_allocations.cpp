#include "host_allocations.hpp"

#include <mutex>

namespace polyhal {

void HostAllocations::insert(const HostAllocation& allocation) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    byBase_[allocation.base] = allocation;
}

std::optional<HostAllocation> HostAllocations::eraseExact(const void* ptr) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    auto it = byBase_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == byBase_.end()) return std::nullopt;
    HostAllocation allocation = it->second;
    byBase_.erase(it);
    return allocation;
}

std::optional<HostAllocation> HostAllocations::find(const void* ptr) const {
    const auto address = reinterpret_cast<uintptr_t>(ptr);
    std::shared_lock<std::shared_mutex> lock(mutex_);
    if (byBase_.empty()) return std::nullopt;
    auto it = byBase_.upper_bound(address);
    if (it == byBase_.begin()) return std::nullopt;
    --it;
    if (address - it->second.base >= it->second.size) return std::nullopt;
    return it->second;
}

}  // namespace polyhal
