// Pinned host memory made by halMallocHost: which device it was made for, so it can be freed
// through the right backend and recognised as host memory by copies.
#ifndef POLYHAL_HAL_SRC_HOST_ALLOCATIONS_HPP_
#define POLYHAL_HAL_SRC_HOST_ALLOCATIONS_HPP_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>

namespace polyhal {

struct Device;

struct HostAllocation {
    uintptr_t base;
    size_t size;
    Device* device;
};

class HostAllocations {
  public:
    void insert(const HostAllocation& allocation);
    // Removes the allocation that starts exactly at `ptr`.
    std::optional<HostAllocation> eraseExact(const void* ptr);
    // The allocation containing `ptr`, if any.
    std::optional<HostAllocation> find(const void* ptr) const;

  private:
    mutable std::shared_mutex mutex_;
    std::map<uintptr_t, HostAllocation> byBase_;
};

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_HOST_ALLOCATIONS_HPP_
