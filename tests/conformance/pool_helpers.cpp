// Implements pool_helpers.hpp.
#include "pool_helpers.hpp"

#include <cstring>
#include <string>

#include "cts.hpp"

namespace cts {

namespace {

// Filling a device is only quick when it is small.
constexpr uint64_t kLargestExhausted = uint64_t{256} << 20;

}  // namespace

int currentDevice() {
    int device = 0;
    HAL_REQUIRE_OK(halGetDevice(&device));
    return device;
}

halMemPoolStats poolStats() {
    halMemPoolStats stats;
    std::memset(&stats, 0, sizeof stats);
    stats.size = sizeof stats;
    HAL_REQUIRE_OK(halMemPoolGetStats(currentDevice(), &stats));
    return stats;
}

void startWithEmptyCache() {
    HAL_REQUIRE_OK(halSynchronizeDevice());
    HAL_REQUIRE_OK(halMemPoolTrim(currentDevice(), 0));
}

AttributeOverride::AttributeOverride(halMemPoolAttribute attribute, uint64_t value)
    : device_(currentDevice()), attribute_(attribute) {
    HAL_REQUIRE_OK(halMemPoolGetAttribute(device_, attribute_, &previous_));
    HAL_REQUIRE_OK(halMemPoolSetAttribute(device_, attribute_, value));
}

void orderAfter(halStream earlier, halStream later) {
    Event event(HAL_EVENT_DISABLE_TIMING);
    HAL_REQUIRE_OK(halRecordEvent(event, earlier));
    HAL_REQUIRE_OK(halStreamWaitEvent(later, event));
}

bool tooLargeToExhaust() {
    const uint64_t total = deviceProperties().totalMemory;
    if (total <= kLargestExhausted) return false;
    skip("device memory (" + std::to_string(total) +
         " bytes) is too large to exhaust quickly; POLYHAL_CPU_MEMORY makes the CPU device small");
    return true;
}

std::vector<void*> fillDevice(halStream stream) {
    std::vector<void*> blocks;
    const uint64_t total = deviceProperties().totalMemory;
    while (true) {
        void* block = nullptr;
        const halError status = halMallocAsync(&block, kFillBlock, stream);
        if (status == HAL_ERROR_OUT_OF_MEMORY) break;
        HAL_REQUIRE_OK(status);
        blocks.push_back(block);
        REQUIRE(blocks.size() <= total / kFillBlock);
    }
    REQUIRE(blocks.size() >= 2);
    return blocks;
}

}  // namespace cts
