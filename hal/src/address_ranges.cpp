// Implements address_ranges.hpp.
#include "address_ranges.hpp"

#include <iterator>
#include <mutex>

namespace polyhal {

void AddressRanges::insert(const AddressRange& allocation) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    byBase_[allocation.base] = allocation;
    count_.store(byBase_.size(), std::memory_order_release);
}

std::optional<AddressRange> AddressRanges::insertDisjoint(const AddressRange& range) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    if (auto existing = overlappingLocked(range.base, range.size)) return existing;
    byBase_[range.base] = range;
    count_.store(byBase_.size(), std::memory_order_release);
    return std::nullopt;
}

std::optional<AddressRange> AddressRanges::overlapping(uintptr_t base, size_t size) const {
    if (count_.load(std::memory_order_acquire) == 0) return std::nullopt;
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return overlappingLocked(base, size);
}

// The range starting last at or before `base` may reach into it; else the first one starting
// after `base` may begin before its end.
std::optional<AddressRange> AddressRanges::overlappingLocked(uintptr_t base, size_t size) const {
    auto after = byBase_.upper_bound(base);
    if (after != byBase_.begin()) {
        const AddressRange& before = std::prev(after)->second;
        if (base - before.base < before.size) return before;
    }
    if (after != byBase_.end() && after->second.base - base < size) return after->second;
    return std::nullopt;
}

std::optional<AddressRange> AddressRanges::eraseExact(const void* ptr) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    auto it = byBase_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == byBase_.end()) return std::nullopt;
    AddressRange allocation = it->second;
    byBase_.erase(it);
    count_.store(byBase_.size(), std::memory_order_release);
    return allocation;
}

std::vector<AddressRange> AddressRanges::eraseDevice(const Device* device) {
    std::vector<AddressRange> erased;
    std::unique_lock<std::shared_mutex> lock(mutex_);
    for (auto it = byBase_.begin(); it != byBase_.end();) {
        if (it->second.device != device) {
            ++it;
            continue;
        }
        erased.push_back(it->second);
        it = byBase_.erase(it);
    }
    count_.store(byBase_.size(), std::memory_order_release);
    return erased;
}

std::optional<AddressRange> AddressRanges::find(const void* ptr) const {
    if (count_.load(std::memory_order_acquire) == 0) return std::nullopt;
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
