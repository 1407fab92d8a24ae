// Memory polyhal knows outside the pools, by address range: pinned host memory made by
// halMallocHost (which device it was made for, so it is freed through the right backend and
// recognised as host memory by copies) and memory of other processes opened with
// halIpcOpenMemHandle (which device mapped it, and what the backend returned); host memory
// registered with halHostRegister and managed memory from halMallocManaged.
#ifndef POLYHAL_HAL_SRC_ADDRESS_RANGES_HPP_
#define POLYHAL_HAL_SRC_ADDRESS_RANGES_HPP_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <vector>

namespace polyhal {

struct Device;

struct AddressRange {
    uintptr_t base;
    size_t size;
    Device* device;
    void* mapping = nullptr;  // what the backend returned, where that is not `base` (IPC)
};

class AddressRanges {
  public:
    void insert(const AddressRange& allocation);
    // Inserts `range` unless it shares a byte with one already held; returns that one instead.
    std::optional<AddressRange> insertDisjoint(const AddressRange& range);
    // The first range sharing a byte with [base, base + size), if any.
    std::optional<AddressRange> overlapping(uintptr_t base, size_t size) const;
    // Removes the allocation that starts exactly at `ptr`.
    std::optional<AddressRange> eraseExact(const void* ptr);
    // Removes every allocation of `device`, returning them.
    std::vector<AddressRange> eraseDevice(const Device* device);
    // The allocation containing `ptr`, if any.
    std::optional<AddressRange> find(const void* ptr) const;

  private:
    std::optional<AddressRange> overlappingLocked(uintptr_t base, size_t size) const;

    std::atomic<size_t> count_{0};  // lets find() skip the lock while there is none
    mutable std::shared_mutex mutex_;
    std::map<uintptr_t, AddressRange> byBase_;
};

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_ADDRESS_RANGES_HPP_
