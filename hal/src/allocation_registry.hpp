// Which device (or pinned host memory) every allocation made through polyhal belongs to, so
// copies can infer their direction, bounds can be checked and bad frees refused.
#ifndef POLYHAL_HAL_SRC_ALLOCATION_REGISTRY_HPP_
#define POLYHAL_HAL_SRC_ALLOCATION_REGISTRY_HPP_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <vector>

namespace polyhal {

struct Device;

struct Allocation {
    uintptr_t base;
    size_t size;
    Device* device;  // owning device (for pinned host memory: the device it was made for)
    bool host;       // pinned host memory from halMallocHost
};

class AllocationRegistry {
  public:
    void insert(const Allocation& allocation);
    // Removes the allocation that starts exactly at `ptr` and is of the given class.
    std::optional<Allocation> eraseExact(const void* ptr, bool host);
    // The allocation containing `ptr`, if any.
    std::optional<Allocation> find(const void* ptr) const;
    // Removes and returns every device allocation of `device`.
    std::vector<Allocation> eraseDevice(const Device* device);

  private:
    mutable std::shared_mutex mutex_;
    std::map<uintptr_t, Allocation> byBase_;
};

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_ALLOCATION_REGISTRY_HPP_
