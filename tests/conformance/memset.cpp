// halMemset and halMemsetAsync.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cts.hpp"

TEST_CASE("halMemset sets device memory to the low byte of value", "[memset]") {
    constexpr size_t kSize = 1 << 16;
    cts::DeviceMemory device(kSize);
    std::vector<uint8_t> result(kSize, 0);
    HAL_REQUIRE_OK(halMemset(device.get(), kSize, 0x1A5, kSize));
    HAL_REQUIRE_OK(halMemcpy(result.data(), kSize, device.get(), kSize, HAL_MEMCPY_DEVICE_TO_HOST));
    CHECK(result == std::vector<uint8_t>(kSize, 0xA5));
}

TEST_CASE("halMemset touches only the requested range", "[memset]") {
    cts::DeviceMemory device(1024);
    std::vector<uint8_t> result(1024, 0);
    HAL_REQUIRE_OK(halMemset(device.get(), 1024, 0, 1024));
    HAL_REQUIRE_OK(halMemset(device.get<uint8_t>() + 100, 1024 - 100, 0xEE, 50));
    HAL_REQUIRE_OK(halMemcpy(result.data(), 1024, device.get(), 1024, HAL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < 1024; ++i) REQUIRE(result[i] == (i >= 100 && i < 150 ? 0xEE : 0));
}

TEST_CASE("halMemset works on host memory", "[memset]") {
    std::vector<uint8_t> pageable(300, 1);
    cts::HostMemory pinnedMemory(300);
    auto* pinned = pinnedMemory.get<uint8_t>();
    std::memset(pinned, 1, 300);
    for (uint8_t* host : {pageable.data(), pinned}) {
        INFO((host == pinned ? "pinned" : "pageable"));
        HAL_REQUIRE_OK(halMemset(host, 300, 9, 200));
        for (size_t i = 0; i < 300; ++i) REQUIRE(host[i] == (i < 200 ? 9 : 1));
    }
}

TEST_CASE("halMemsetAsync sets host memory in stream order", "[memset][ordering]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    // A device that cannot reach host memory must not be handed it: the host sets it, in order.
    constexpr size_t kSize = 4096;
    std::vector<uint8_t> pageable(kSize, 1);
    cts::HostMemory pinnedMemory(kSize);
    auto* pinned = pinnedMemory.get<uint8_t>();
    std::memset(pinned, 1, kSize);
    const auto all = [](const uint8_t* bytes, size_t count, uint8_t value) {
        return std::all_of(bytes, bytes + count, [value](uint8_t byte) { return byte == value; });
    };
    cts::Stream stream;
    cts::Gate gate;
    gate.enqueue(stream);
    HAL_REQUIRE_OK(halMemsetAsync(pinned, kSize, 0x3C, kSize, stream));
    HAL_REQUIRE_OK(halMemsetAsync(pageable.data(), kSize, 0x4D, kSize - 1, stream));
    CHECK(halQueryStream(stream) == HAL_ERROR_NOT_READY);
    CHECK(all(pinned, kSize, 1));
    CHECK(all(pageable.data(), kSize, 1));
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK_FALSE(gate.timedOut());
    CHECK(all(pinned, kSize, 0x3C));
    CHECK(all(pageable.data(), kSize - 1, 0x4D));
    CHECK(pageable[kSize - 1] == 1);
}

TEST_CASE("halMemset validates its arguments", "[memset][errors]") {
    cts::DeviceMemory device(256);
    CHECK(halMemset(device.get(), 100, 0, 101) == HAL_ERROR_INVALID_VALUE);
    CHECK(halMemset(nullptr, 100, 0, 10) == HAL_ERROR_INVALID_VALUE);
    HAL_CHECK_OK(halMemset(nullptr, 0, 0, 0));
    cts::Stream stream;
    CHECK(halMemsetAsync(device.get(), 100, 0, 101, stream) == HAL_ERROR_INVALID_VALUE);
    CHECK(halMemsetAsync(nullptr, 100, 0, 10, stream) == HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("halMemsetAsync runs in stream order", "[memset][ordering]") {
    constexpr size_t kSize = 1 << 16;
    cts::DeviceMemory device(kSize);
    std::vector<uint8_t> result(kSize, 0);
    cts::Stream stream;
    HAL_REQUIRE_OK(halMemsetAsync(device.get(), kSize, 0x11, kSize, stream));
    HAL_REQUIRE_OK(
        halMemsetAsync(device.get<uint8_t>() + kSize / 2, kSize / 2, 0x22, kSize / 2, stream));
    HAL_REQUIRE_OK(halMemcpyAsync(result.data(), kSize, device.get(), kSize,
                                  HAL_MEMCPY_DEVICE_TO_HOST, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    for (size_t i = 0; i < kSize; ++i) REQUIRE(result[i] == (i < kSize / 2 ? 0x11 : 0x22));
}
