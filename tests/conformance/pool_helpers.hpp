// What the pool's cases and the trace's pool cases share: statistics, an empty start, attribute
// overrides, ordering two streams, and filling a small device (the cts.cpu.oom run).
#ifndef POLYHAL_TESTS_CONFORMANCE_POOL_HELPERS_HPP_
#define POLYHAL_TESTS_CONFORMANCE_POOL_HELPERS_HPP_

#include <polyhal/hal.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cts {

// The block size fillDevice() allocates.
constexpr size_t kFillBlock = size_t{1} << 20;

int currentDevice();

// The current device's pool statistics.
halMemPoolStats poolStats();

// Waits for all work, then returns every cached segment to the device.
void startWithEmptyCache();

// Sets a pool attribute until the end of the scope, then restores its previous value.
class AttributeOverride {
  public:
    AttributeOverride(halMemPoolAttribute attribute, uint64_t value);
    AttributeOverride(const AttributeOverride&) = delete;
    AttributeOverride& operator=(const AttributeOverride&) = delete;
    ~AttributeOverride() { halMemPoolSetAttribute(device_, attribute_, previous_); }

  private:
    int device_;
    halMemPoolAttribute attribute_;
    uint64_t previous_ = 0;
};

// Makes `later` wait for the work submitted to `earlier` so far.
void orderAfter(halStream earlier, halStream later);

// True, after printing the skip, when the device is too large to fill quickly.
bool tooLargeToExhaust();

// Allocates kFillBlock blocks on `stream` until the device has no room for another.
std::vector<void*> fillDevice(halStream stream);

}  // namespace cts

#endif  // POLYHAL_TESTS_CONFORMANCE_POOL_HELPERS_HPP_
