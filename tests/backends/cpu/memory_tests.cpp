// Device and host memory.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backend_fixture.hpp"

using namespace cpu_tests;

TEST_CASE("device memory is 256-byte aligned, usable host memory", "[memory]") {
    void* memory = nullptr;
    REQUIRE(backend().memAllocDevice(device0(), 1000, &memory) == HAL_SUCCESS);
    CHECK(reinterpret_cast<uintptr_t>(memory) % 256 == 0);
    std::memset(memory, 0x5a, 1000);  // HAL_DEVICE_CAP_HOST_ACCESSIBLE
    REQUIRE(backend().memFreeDevice(device0(), memory) == HAL_SUCCESS);
}

TEST_CASE("freeing memory the device did not allocate is refused", "[memory]") {
    void* memory = nullptr;
    REQUIRE(backend().memAllocDevice(device0(), 64, &memory) == HAL_SUCCESS);
    REQUIRE(backend().memFreeDevice(device0(), memory) == HAL_SUCCESS);
    CHECK(backend().memFreeDevice(device0(), memory) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(lastError(), Catch::Contains("not device memory"));
}

TEST_CASE("an allocation beyond the device's capacity fails with the sizes in the message",
          "[memory]") {
    halPluginDeviceInfo info = {};
    info.size = sizeof info;
    REQUIRE(backend().deviceGetInfo(device0(), &info) == HAL_SUCCESS);
    void* memory = nullptr;
    CHECK(backend().memAllocDevice(device0(), info.totalMemory + 1, &memory) ==
          HAL_ERROR_OUT_OF_MEMORY);
    CHECK_THAT(lastError(), Catch::Contains(std::to_string(info.totalMemory + 1) + " bytes") &&
                                Catch::Contains("available"));
    CHECK(memory == nullptr);
}

TEST_CASE("host memory is aligned and freed", "[memory]") {
    void* memory = nullptr;
    REQUIRE(backend().memAllocHost(device0(), 4096, &memory) == HAL_SUCCESS);
    CHECK(reinterpret_cast<uintptr_t>(memory) % 256 == 0);
    std::memset(memory, 1, 4096);
    REQUIRE(backend().memFreeHost(device0(), memory) == HAL_SUCCESS);
}

TEST_CASE("copies between device allocations run on the stream", "[memory]") {
    Stream stream;
    constexpr size_t kBytes = 3 * 4096 + 17;
    void* a = nullptr;
    void* b = nullptr;
    REQUIRE(backend().memAllocDevice(device0(), kBytes, &a) == HAL_SUCCESS);
    REQUIRE(backend().memAllocDevice(device0(), kBytes, &b) == HAL_SUCCESS);
    std::vector<unsigned char> host(kBytes, 0);
    REQUIRE(backend().memsetAsync(stream.get(), a, 7, kBytes) == HAL_SUCCESS);
    REQUIRE(backend().memcpyAsync(stream.get(), b, a, kBytes, HAL_MEMCPY_DEVICE_TO_DEVICE) ==
            HAL_SUCCESS);
    REQUIRE(backend().memcpyAsync(stream.get(), host.data(), b, kBytes,
                                  HAL_MEMCPY_DEVICE_TO_HOST) == HAL_SUCCESS);
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    CHECK(std::all_of(host.begin(), host.end(), [](unsigned char byte) { return byte == 7; }));
    REQUIRE(backend().memFreeDevice(device0(), a) == HAL_SUCCESS);
    REQUIRE(backend().memFreeDevice(device0(), b) == HAL_SUCCESS);
}
