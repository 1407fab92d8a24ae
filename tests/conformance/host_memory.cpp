// Host memory shared with a device beyond halMallocHost: registered host memory
// (halHostRegister, as cudaHostRegister) and managed memory (halMallocManaged, as
// cudaMallocManaged).
#include <polyhal/hal.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cts.hpp"
#include "kernels.hpp"

namespace {

// Host memory the program allocated itself, page-aligned as some vendors want it registered.
struct OwnMemory {
    explicit OwnMemory(size_t bytes)
        : bytes(bytes),
          memory(static_cast<unsigned char*>(std::aligned_alloc(4096, bytes)), &std::free) {}
    unsigned char* get() const { return memory.get(); }
    size_t bytes;
    std::unique_ptr<unsigned char, void (*)(void*)> memory;
};

bool supports(halDeviceCapability capability) {
    return (cts::deviceProperties().capabilities & capability) != 0;
}

}  // namespace

TEST_CASE("a device without host registration or managed memory refuses them by name",
          "[host_register][managed]") {
    OwnMemory own(4096);
    if (!supports(HAL_DEVICE_CAP_HOST_REGISTER)) {
        CHECK(halHostRegister(own.get(), own.bytes, 0) == HAL_ERROR_NOT_SUPPORTED);
        CHECK(std::string(halGetLastErrorMessage()).find("registration") != std::string::npos);
    }
    if (!supports(HAL_DEVICE_CAP_MANAGED_MEMORY)) {
        void* managed = nullptr;
        CHECK(halMallocManaged(&managed, 4096, 0) == HAL_ERROR_NOT_SUPPORTED);
        CHECK(std::string(halGetLastErrorMessage()).find("managed memory") != std::string::npos);
        CHECK(managed == nullptr);
    }
}

// The point of registering: a copy to pageable memory may return only once done (CUDA, HIP);
// to registered memory it is enqueued as to halMallocHost memory, so it overlaps other work.
TEST_CASE("a copy to registered host memory returns while its stream is held, then lands",
          "[host_register]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_REGISTER);
    constexpr size_t kBytes = 64 * 1024;
    OwnMemory own(kBytes);
    std::memset(own.get(), 0, kBytes);
    HAL_REQUIRE_OK(halHostRegister(own.get(), kBytes, 0));
    cts::DeviceMemory device(kBytes);
    HAL_REQUIRE_OK(halMemset(device.get(), kBytes, 0x5A, kBytes));
    cts::Stream stream;
    {
        cts::Gate gate;
        gate.enqueue(stream);
        HAL_CHECK_OK(
            halMemcpyAsync(own.get(), kBytes, device.get(), kBytes, HAL_MEMCPY_DEFAULT, stream));
        CHECK_FALSE(gate.timedOut());
        gate.open();
    }
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(own.get()[0] == 0x5A);
    CHECK(own.get()[kBytes - 1] == 0x5A);
    // Registered memory is host memory to the copy rules.
    CHECK(halMemcpy(own.get(), kBytes, device.get(), kBytes, HAL_MEMCPY_DEVICE_TO_DEVICE) ==
          HAL_ERROR_INVALID_VALUE);
    HAL_CHECK_OK(halHostUnregister(own.get()));
}

TEST_CASE("halHostRegister refuses what it cannot own, and halHostUnregister what it did not",
          "[host_register]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_REGISTER);
    constexpr size_t kBytes = 16 * 4096;
    OwnMemory own(kBytes);
    const auto message = [] { return std::string(halGetLastErrorMessage()); };
    CHECK(halHostRegister(nullptr, kBytes, 0) == HAL_ERROR_INVALID_VALUE);
    CHECK(halHostRegister(own.get(), 0, 0) == HAL_ERROR_INVALID_VALUE);
    CHECK(halHostRegister(own.get(), kBytes, 1u) == HAL_ERROR_INVALID_VALUE);
    CHECK(message().find("flags") != std::string::npos);
    cts::DeviceMemory device(4096);
    CHECK(halHostRegister(device.get(), 4096, 0) == HAL_ERROR_INVALID_VALUE);
    cts::HostMemory pinned(4096);
    CHECK(halHostRegister(pinned.get(), 4096, 0) == HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);

    HAL_REQUIRE_OK(halHostRegister(own.get() + 4096, 8 * 4096, 0));
    // Overlapping the start, the end, or inside: each names the registered range.
    CHECK(halHostRegister(own.get(), 2 * 4096, 0) == HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CHECK(halHostRegister(own.get() + 8 * 4096, 2 * 4096, 0) ==
          HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CHECK(halHostRegister(own.get() + 2 * 4096, 4096, 0) ==
          HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    // A neighbour that shares no byte is fine.
    HAL_CHECK_OK(halHostRegister(own.get() + 9 * 4096, 4096, 0));

    CHECK(halHostUnregister(own.get() + 2 * 4096) == HAL_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CHECK(message().find("inside") != std::string::npos);
    CHECK(halHostUnregister(own.get()) == HAL_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CHECK(halFreeHost(own.get() + 4096) == HAL_ERROR_INVALID_VALUE);
    CHECK(message().find("halHostUnregister") != std::string::npos);
    CHECK(halFree(own.get() + 4096) == HAL_ERROR_INVALID_VALUE);
    CHECK(message().find("halHostUnregister") != std::string::npos);

    HAL_CHECK_OK(halHostUnregister(own.get() + 4096));
    HAL_CHECK_OK(halHostUnregister(own.get() + 9 * 4096));
    CHECK(halHostUnregister(own.get() + 4096) == HAL_ERROR_HOST_MEMORY_NOT_REGISTERED);
    // Unregistered, the range can be registered again.
    HAL_CHECK_OK(halHostRegister(own.get(), kBytes, 0));
    HAL_CHECK_OK(halHostUnregister(own.get()));
}

TEST_CASE("managed memory is set, copied and computed on by the device and read by the host",
          "[managed]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_MANAGED_MEMORY);
    constexpr uint32_t kCount = 1024;
    constexpr size_t kBytes = kCount * sizeof(uint32_t);
    void* managed = nullptr;
    HAL_REQUIRE_OK(halMallocManaged(&managed, kBytes, 0));
    REQUIRE(managed != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(managed) % 256 == 0);
    auto* values = static_cast<uint32_t*>(managed);
    // The host writes it directly while no work uses it.
    for (uint32_t i = 0; i < kCount; ++i) values[i] = i;
    cts::Stream stream;
    cts::DeviceMemory device(kBytes);
    HAL_REQUIRE_OK(
        halMemcpyAsync(device.get(), kBytes, managed, kBytes, HAL_MEMCPY_DEFAULT, stream));
    HAL_REQUIRE_OK(halMemsetAsync(managed, kBytes, 0, kBytes, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(values[kCount - 1] == 0);
    std::vector<uint32_t> copied(kCount);
    HAL_REQUIRE_OK(halMemcpy(copied.data(), kBytes, device.get(), kBytes, HAL_MEMCPY_DEFAULT));
    CHECK(copied[kCount - 1] == kCount - 1);

    cts::Module module;
    halFunction fill = nullptr;
    if (cts::loadKernel("fill_u32", module, &fill)) {
        const uint32_t value = 0xC0FFEEu, n = kCount;
        HAL_REQUIRE_OK(
            cts::launch1d(fill, n, 64, {cts::arg(managed), cts::arg(value), cts::arg(n)}, stream));
        HAL_REQUIRE_OK(halSynchronizeStream(stream));
        CHECK(values[0] == value);
        CHECK(values[kCount - 1] == value);
    }
    HAL_CHECK_OK(halFree(managed));
}

TEST_CASE("halMallocManaged refuses bad arguments and halFree only its own pointer", "[managed]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_MANAGED_MEMORY);
    void* managed = nullptr;
    CHECK(halMallocManaged(nullptr, 256, 0) == HAL_ERROR_INVALID_VALUE);
    CHECK(halMallocManaged(&managed, 0, 0) == HAL_ERROR_INVALID_VALUE);
    CHECK(halMallocManaged(&managed, 256, 4u) == HAL_ERROR_INVALID_VALUE);
    HAL_REQUIRE_OK(halMallocManaged(&managed, 4096, 0));
    auto* interior = static_cast<unsigned char*>(managed) + 64;
    CHECK(halFree(interior) == HAL_ERROR_INVALID_VALUE);
    CHECK(std::string(halGetLastErrorMessage()).find("managed") != std::string::npos);
    CHECK(halFreeHost(managed) == HAL_ERROR_INVALID_VALUE);
    CHECK(halHostRegister(managed, 4096, 0) != HAL_SUCCESS);
    HAL_CHECK_OK(halFree(managed));
    CHECK(halFree(managed) == HAL_ERROR_INVALID_VALUE);
}
