// Device and host memory, copies and fills.
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "plugin_fixture.hpp"

using namespace opencl_test;

TEST_CASE("device memory is 256-byte aligned") {
    for (size_t size : {1, 3, 256, 1000, 65537}) {
        DeviceMemory memory(size);
        CHECK(reinterpret_cast<std::uintptr_t>(memory.get()) % 256 == 0);
    }
}

TEST_CASE("copies round-trip through device memory") {
    Stream stream;
    const size_t count = 10000;
    std::vector<uint32_t> values(count);
    std::iota(values.begin(), values.end(), 1u);
    DeviceMemory first(count * sizeof(uint32_t)), second(count * sizeof(uint32_t));
    upload(stream, first.get(), values);
    REQUIRE_OK(plugin().memcpyAsync(stream.get(), second.get(), first.get(),
                                    count * sizeof(uint32_t), HAL_MEMCPY_DEVICE_TO_DEVICE));
    CHECK(download<uint32_t>(stream, second.get(), count) == values);
}

TEST_CASE("memset fills exactly the bytes it is given") {
    Stream stream;
    const size_t count = 4096;
    DeviceMemory memory(count);
    upload(stream, memory.get(), std::vector<uint8_t>(count, 0));
    REQUIRE_OK(plugin().memsetAsync(stream.get(), memory.as<uint8_t>() + 100, 0xab, 1000));
    const std::vector<uint8_t> bytes = download<uint8_t>(stream, memory.get(), count);
    for (size_t i = 0; i < count; ++i) {
        INFO("byte " << i);
        CHECK(bytes[i] == (i >= 100 && i < 1100 ? 0xab : 0));
    }
}

TEST_CASE("host-to-host copies run in stream order") {
    Stream stream;
    Gate gate;
    gate.block(stream);
    const std::vector<int> source{1, 2, 3, 4};
    std::vector<int> target(4, 0);
    REQUIRE_OK(plugin().memcpyAsync(stream.get(), target.data(), source.data(),
                                    source.size() * sizeof(int), HAL_MEMCPY_HOST_TO_HOST));
    CHECK(plugin().streamQuery(stream.get()) == HAL_ERROR_NOT_READY);
    CHECK(target == std::vector<int>(4, 0));
    gate.open();
    stream.synchronize();
    CHECK(target == source);
}

TEST_CASE("page-locked host memory takes part in copies both ways") {
    Stream stream;
    const size_t count = 1000;
    void* host = nullptr;
    REQUIRE_OK(plugin().memAllocHost(device(), count * sizeof(float), &host));
    auto* values = static_cast<float*>(host);
    for (size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i) * 0.5f;
    DeviceMemory memory(count * sizeof(float));
    REQUIRE_OK(plugin().memcpyAsync(stream.get(), memory.get(), host, count * sizeof(float),
                                    HAL_MEMCPY_HOST_TO_DEVICE));
    stream.synchronize();
    std::fill(values, values + count, 0.0f);
    REQUIRE_OK(plugin().memcpyAsync(stream.get(), host, memory.get(), count * sizeof(float),
                                    HAL_MEMCPY_DEVICE_TO_HOST));
    stream.synchronize();
    for (size_t i = 0; i < count; ++i) CHECK(values[i] == static_cast<float>(i) * 0.5f);
    REQUIRE_OK(plugin().memFreeHost(device(), host));
}

TEST_CASE("an allocation beyond the device's limit is HAL_ERROR_OUT_OF_MEMORY") {
    void* ptr = nullptr;
    CHECK(plugin().memAllocDevice(device(), SIZE_MAX / 2, &ptr) == HAL_ERROR_OUT_OF_MEMORY);
    CHECK(lastError().find("CL_DEVICE_MAX_MEM_ALLOC_SIZE") != std::string::npos);
    CHECK(ptr == nullptr);
}
