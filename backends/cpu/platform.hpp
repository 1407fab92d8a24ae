// The backend's process-wide state, created by initialize(): the devices and the block pool
// they share.
#ifndef POLYHAL_BACKENDS_CPU_PLATFORM_HPP_
#define POLYHAL_BACKENDS_CPU_PLATFORM_HPP_

#include <memory>
#include <vector>

#include "device.hpp"
#include "engine/block_pool.hpp"
#include "engine/config.hpp"

namespace polyhal::cpu {

class Platform {
  public:
    // Throws std::system_error (no thread for the pool) or std::bad_alloc.
    explicit Platform(const Config& config);

    int deviceCount() const { return static_cast<int>(devices_.size()); }
    // nullptr when `ordinal` is out of range.
    Device* device(int ordinal) const;

  private:
    BlockPool pool_;  // before the devices, which hand it to their streams
    std::vector<std::unique_ptr<Device>> devices_;
};

// The initialised platform. The core calls no other entry before initialize() succeeded, so
// this is always valid where it is used.
Platform& platform();

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_PLATFORM_HPP_
