// Memory: device and pinned host allocations, freeing, exhaustion.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cts.hpp"

using namespace std::chrono_literals;

TEST_CASE("halMalloc returns distinct 256-byte aligned blocks", "[memory]") {
    std::vector<void*> blocks;
    for (size_t size : {size_t{1}, size_t{7}, size_t{256}, size_t{1000}, size_t{1} << 20}) {
        INFO("size " << size);
        void* p = nullptr;
        HAL_REQUIRE_OK(halMalloc(&p, size));
        REQUIRE(p != nullptr);
        CHECK(reinterpret_cast<uintptr_t>(p) % 256 == 0);
        for (void* other : blocks) CHECK(other != p);
        blocks.push_back(p);
    }
    for (void* p : blocks) HAL_CHECK_OK(halFree(p));
}

TEST_CASE("halMalloc and halFree validate their arguments", "[memory]") {
    void* p = nullptr;
    CHECK(halMalloc(nullptr, 64) == HAL_ERROR_INVALID_VALUE);
    CHECK(halMalloc(&p, 0) == HAL_ERROR_INVALID_VALUE);
    CHECK(p == nullptr);

    HAL_REQUIRE_OK(halMalloc(&p, 512));
    CHECK(halFree(static_cast<char*>(p) + 1) == HAL_ERROR_INVALID_VALUE);
    HAL_CHECK_OK(halFree(p));
    CHECK(halFree(p) == HAL_ERROR_INVALID_VALUE);

    int local = 0;
    CHECK(halFree(&local) == HAL_ERROR_INVALID_VALUE);
    cts::HostMemory pinned(64);
    CHECK(halFree(pinned.get()) == HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("halMallocHost returns usable host memory", "[memory]") {
    void* p = nullptr;
    HAL_REQUIRE_OK(halMallocHost(&p, 4096));
    REQUIRE(p != nullptr);
    auto* bytes = static_cast<unsigned char*>(p);
    for (int i = 0; i < 4096; ++i) bytes[i] = static_cast<unsigned char>(i);
    for (int i = 0; i < 4096; ++i) REQUIRE(bytes[i] == static_cast<unsigned char>(i));
    HAL_CHECK_OK(halFreeHost(p));

    CHECK(halMallocHost(nullptr, 64) == HAL_ERROR_INVALID_VALUE);
    CHECK(halMallocHost(&p, 0) == HAL_ERROR_INVALID_VALUE);
    int local = 0;
    CHECK(halFreeHost(&local) == HAL_ERROR_INVALID_VALUE);
    cts::DeviceMemory device(64);
    CHECK(halFreeHost(device.get()) == HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("halFree does not wait, and work already using the memory still runs safely",
          "[memory][sync]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    constexpr size_t kSize = 64 * 1024;
    std::vector<uint8_t> source(kSize);
    for (size_t i = 0; i < kSize; ++i) source[i] = static_cast<uint8_t>(i * 3 + 1);
    // Pinned, so that the copy behind the gate cannot block the host (pageable copies may).
    cts::HostMemory result(kSize);
    std::memset(result.get(), 0, kSize);
    void* p = nullptr;
    HAL_REQUIRE_OK(halMalloc(&p, kSize));
    HAL_REQUIRE_OK(halMemcpy(p, kSize, source.data(), kSize, HAL_MEMCPY_HOST_TO_DEVICE));
    cts::Stream stream;
    cts::Gate gate;
    gate.enqueue(stream);
    HAL_REQUIRE_OK(
        halMemcpyAsync(result.get(), kSize, p, kSize, HAL_MEMCPY_DEVICE_TO_HOST, stream));
    HAL_REQUIRE_OK(halFree(p));
    // Had halFree waited for the copy, the gate would have timed out before it returned.
    CHECK_FALSE(gate.timedOut());
    CHECK(halQueryStream(stream) == HAL_ERROR_NOT_READY);
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(std::vector<uint8_t>(result.get<uint8_t>(), result.get<uint8_t>() + kSize) == source);
}

TEST_CASE("halFree(NULL) does nothing", "[memory]") {
    HAL_CHECK_OK(halFree(nullptr));
}

TEST_CASE("an allocation larger than the device fails with OUT_OF_MEMORY", "[memory][oom]") {
    const uint64_t total = cts::deviceProperties().totalMemory;
    if (total >= SIZE_MAX / 2) {
        cts::skip("device memory is as large as the address space");
        return;
    }
    const size_t request = static_cast<size_t>(total) + 1;
    void* p = nullptr;
    REQUIRE(halMalloc(&p, request) == HAL_ERROR_OUT_OF_MEMORY);
    CHECK(p == nullptr);
    CHECK_THAT(std::string(halGetLastErrorMessage()), Catch::Contains(std::to_string(request)));
}

TEST_CASE("an exhausted device recovers when memory is freed", "[memory][oom]") {
    // Filling a device is only quick when it is small; the CPU backend's POLYHAL_CPU_MEMORY
    // makes it so (the cts.cpu.oom run).
    constexpr uint64_t kLargestExhausted = uint64_t{64} << 20;
    const uint64_t total = cts::deviceProperties().totalMemory;
    if (total > kLargestExhausted) {
        cts::skip("device memory (" + std::to_string(total) +
                  " bytes) is too large to exhaust quickly");
        return;
    }
    const size_t chunk = static_cast<size_t>(total / 8);
    std::vector<void*> blocks;
    halError status = HAL_SUCCESS;
    while (blocks.size() < 16) {
        void* p = nullptr;
        status = halMalloc(&p, chunk);
        if (status != HAL_SUCCESS) break;
        blocks.push_back(p);
    }
    CHECK(status == HAL_ERROR_OUT_OF_MEMORY);
    CHECK(blocks.size() >= 1);
    CHECK(blocks.size() <= 8);
    REQUIRE_FALSE(blocks.empty());

    HAL_REQUIRE_OK(halFree(blocks.back()));
    blocks.pop_back();
    void* again = nullptr;
    HAL_CHECK_OK(halMalloc(&again, chunk));
    if (again != nullptr) blocks.push_back(again);
    for (void* p : blocks) HAL_CHECK_OK(halFree(p));
}

namespace {

constexpr size_t kMemInfoBytes = 64u << 20;

// The device's free and total memory with nothing cached in the pool, so that an allocation
// takes new memory from the device; false, the test skipped, with less than twice
// kMemInfoBytes free.
bool uncachedMemInfo(size_t* freeBytes, size_t* totalBytes) {
    int device = 0;
    HAL_REQUIRE_OK(halGetDevice(&device));
    HAL_REQUIRE_OK(halSynchronizeDevice());
    HAL_REQUIRE_OK(halMemPoolTrim(device, 0));
    HAL_REQUIRE_OK(halGetMemInfo(freeBytes, totalBytes));
    if (*freeBytes >= 2 * kMemInfoBytes) return true;
    cts::skip("less than 128 MiB free");
    return false;
}

}  // namespace

TEST_CASE("halGetMemInfo reports the device's total, and free memory shrinking as it is used",
          "[memory]") {
    size_t freeBefore = 0, total = 0;
    if (!uncachedMemInfo(&freeBefore, &total)) return;
    CHECK(total == cts::deviceProperties().totalMemory);
    CHECK(freeBefore <= total);
    cts::DeviceMemory held(kMemInfoBytes);
    size_t freeAfter = 0, totalAfter = 0;
    HAL_REQUIRE_OK(halGetMemInfo(&freeAfter, &totalAfter));
    CHECK(totalAfter == total);
    CHECK(freeAfter + kMemInfoBytes <= freeBefore);
    CHECK(halGetMemInfo(nullptr, &total) == HAL_ERROR_INVALID_VALUE);
    CHECK(halGetMemInfo(&freeAfter, nullptr) == HAL_ERROR_INVALID_VALUE);
}

// torch.cuda.empty_cache() then mem_get_info(): the memory the pool gave back counts free at
// once, also where the backend returns it to the vendor later (the GPU plugins' free thread waits
// for the device, here held by a host function).
TEST_CASE("halGetMemInfo counts memory the pool gave back as free while a stream holds the device",
          "[memory]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    size_t freeBefore = 0, total = 0;
    if (!uncachedMemInfo(&freeBefore, &total)) return;
    int device = 0;
    HAL_REQUIRE_OK(halGetDevice(&device));
    cts::Stream stream;
    void* block = nullptr;
    HAL_REQUIRE_OK(halMalloc(&block, kMemInfoBytes));
    cts::Gate gate;
    gate.enqueue(stream.get());
    HAL_REQUIRE_OK(halFree(block));
    HAL_REQUIRE_OK(halMemPoolTrim(device, 0));
    size_t freeReleased = 0;
    HAL_REQUIRE_OK(halGetMemInfo(&freeReleased, &total));
    gate.open();
    CHECK(freeReleased >= freeBefore);
    CHECK(freeReleased <= total);
}
