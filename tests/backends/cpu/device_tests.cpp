// Devices: count, properties and device-wide synchronisation.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "backend_fixture.hpp"

using namespace cpu_tests;

namespace {
void sleepThenSet(void* flag) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    static_cast<std::atomic<bool>*>(flag)->store(true);
}

// Worker threads that ran countUntilThreadExit and have not ended yet: a thread-local object
// of the worker, destroyed as its thread exits (after its last command completed), decrements
// the count, late.
std::atomic<int> g_runningWorkers{0};

struct ThreadExitCounter {
    ~ThreadExitCounter() {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        g_runningWorkers.fetch_sub(1);
    }
};

void countUntilThreadExit(void*) {
    thread_local ThreadExitCounter counter;
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
                              HAL_DEVICE_CAP_IPC_MEMORY | HAL_DEVICE_CAP_IPC_EVENTS |
                              HAL_DEVICE_CAP_HOST_REGISTER | HAL_DEVICE_CAP_MANAGED_MEMORY;
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

TEST_CASE("deviceSynchronize returns once the workers of destroyed streams have ended",
          "[device]") {
    g_runningWorkers.store(4);
    for (int i = 0; i < 4; ++i) {
        Stream stream;
        REQUIRE(backend().launchHostFunc(stream.get(), countUntilThreadExit, nullptr) ==
                HAL_SUCCESS);
    }
    REQUIRE(backend().deviceSynchronize(device0()) == HAL_SUCCESS);
    // Nothing of theirs (the stream objects, the threads' own memory) outlives the call either.
    CHECK(g_runningWorkers.load() == 0);
}
