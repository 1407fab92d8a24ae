// Devices: count, properties and device-wide synchronisation.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <thread>

#include "backend_fixture.h"

using namespace cpu_tests;

namespace {
void sleepThenSet(void* flag) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    static_cast<std::atomic<bool>*>(flag)->store(true);
}
}  // namespace

TEST_CASE("without POLYHAL_CPU_DEVICES there is one device", "[device]") {
    int count = 0;
    REQUIRE(backend().deviceGetCount(&count) == HAL_SUCCESS);
    CHECK(count == 1);
    halPluginDevice missing = nullptr;
    CHECK(backend().deviceOpen(1, &missing) == HAL_ERROR_INVALID_DEVICE);
    CHECK_THAT(lastError(), Catch::Contains("no CPU device 1"));
}

TEST_CASE("device properties describe a host-accessible device with every capability", "[device]") {
    halPluginDeviceInfo info = {};
    info.size = sizeof info;
    REQUIRE(backend().deviceGetInfo(device0(), &info) == HAL_SUCCESS);
    CHECK_THAT(info.name, Catch::StartsWith("polyhal CPU device 0 (") && Catch::EndsWith(")"));
    CHECK(info.totalMemory > 0);
    CHECK(info.computeUnits == std::max(1u, std::thread::hardware_concurrency()));
    CHECK(info.maxThreadsPerBlock == 1024);
    CHECK(info.maxSharedMemoryPerBlock >= 48 * 1024);
    const uint64_t expected = HAL_DEVICE_CAP_TIMING_EVENTS | HAL_DEVICE_CAP_HOST_FUNCTIONS |
                              HAL_DEVICE_CAP_KERNELS | HAL_DEVICE_CAP_STREAM_PRIORITIES |
                              HAL_DEVICE_CAP_HOST_ACCESSIBLE | HAL_DEVICE_CAP_NATIVE_HANDLES |
                              HAL_DEVICE_CAP_PEER_COPY | HAL_DEVICE_CAP_CONCURRENT_HOST_FUNCTIONS |
                              HAL_DEVICE_CAP_IPC_MEMORY | HAL_DEVICE_CAP_IPC_EVENTS;
    CHECK(info.capabilities == expected);
    CHECK(info.leastStreamPriority == 0);
    CHECK(info.greatestStreamPriority == -2);
}

TEST_CASE("deviceSynchronize waits for the work of every stream, destroyed ones included",
          "[device]") {
    std::atomic<bool> onLive{false};
    std::atomic<bool> onDestroyed{false};
    Stream live;
    Stream destroyed;
    REQUIRE(backend().launchHostFunc(live.get(), sleepThenSet, &onLive) == HAL_SUCCESS);
    REQUIRE(backend().launchHostFunc(destroyed.get(), sleepThenSet, &onDestroyed) == HAL_SUCCESS);
    destroyed.destroy();
    REQUIRE(backend().deviceSynchronize(device0()) == HAL_SUCCESS);
    CHECK(onLive.load());
    CHECK(onDestroyed.load());
}
