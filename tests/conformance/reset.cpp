// halResetDevice: drains the device, then invalidates everything created on it.
#include "kernels.hpp"

using namespace std::chrono_literals;

TEST_CASE("halResetDevice refuses ordinals out of range", "[reset]") {
    int count = 0;
    HAL_REQUIRE_OK(halGetDeviceCount(&count));
    CHECK(halResetDevice(-1) == HAL_ERROR_INVALID_DEVICE);
    CHECK(halResetDevice(count) == HAL_ERROR_INVALID_DEVICE);
}

TEST_CASE("halResetDevice waits for work, then invalidates the device's objects", "[reset]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    int device = 0;
    HAL_REQUIRE_OK(halGetDevice(&device));
    halStream stream = nullptr;
    halEvent event = nullptr;
    void* memory = nullptr;
    void* pinned = nullptr;
    HAL_REQUIRE_OK(halCreateStream(&stream));
    HAL_REQUIRE_OK(halCreateEvent(&event));
    HAL_REQUIRE_OK(halMalloc(&memory, 4096));
    HAL_REQUIRE_OK(halMallocHost(&pinned, 4096));
    std::atomic<bool> done{false};
    cts::enqueueSleep(stream, 30ms);
    cts::enqueueSet(stream, &done);
    HAL_REQUIRE_OK(halRecordEvent(event, stream));

    HAL_REQUIRE_OK(halResetDevice(device));
    CHECK(done.load());
    CHECK(halQueryStream(stream) == HAL_ERROR_INVALID_HANDLE);
    CHECK(halDestroyStream(stream) == HAL_ERROR_INVALID_HANDLE);
    CHECK(halQueryEvent(event) == HAL_ERROR_INVALID_HANDLE);
    CHECK(halDestroyEvent(event) == HAL_ERROR_INVALID_HANDLE);
    CHECK(halFree(memory) == HAL_ERROR_INVALID_VALUE);
    // Pinned memory belongs to the vendor context the reset destroys (CUDA frees it there).
    CHECK(halFreeHost(pinned) == HAL_ERROR_INVALID_VALUE);

    // The device stays usable, its default stream included.
    cts::Stream fresh;
    std::atomic<bool> ran{false}, ranOnDefault{false};
    cts::enqueueSet(fresh, &ran);
    cts::enqueueSet(nullptr, &ranOnDefault);
    HAL_REQUIRE_OK(halSynchronizeStream(fresh));
    HAL_REQUIRE_OK(halSynchronizeStream(nullptr));
    CHECK(ran.load());
    CHECK(ranOnDefault.load());
    cts::DeviceMemory again(4096);
}

TEST_CASE("halResetDevice invalidates modules and their functions", "[reset][module]") {
    cts::Module module;
    halFunction fill = nullptr;
    if (!cts::loadKernel("fill_u32", module, &fill)) return;
    int device = 0;
    HAL_REQUIRE_OK(halGetDevice(&device));
    const halModule stale = module.release();
    HAL_REQUIRE_OK(halResetDevice(device));
    halFunction again = nullptr;
    CHECK(halModuleGetFunction(&again, stale, "fill_u32") == HAL_ERROR_INVALID_HANDLE);
    CHECK(halModuleUnload(stale) == HAL_ERROR_INVALID_HANDLE);
    uint32_t value = 0;
    const halKernelArg args[] = {cts::arg(value)};
    CHECK(halLaunchKernel(fill, {1, 1, 1}, {1, 1, 1}, 0, args, 1, nullptr) ==
          HAL_ERROR_INVALID_HANDLE);
}

// CUDA keeps a kernel fault in its context: every later call on the device fails until the
// context is reset. halResetDevice resets the vendor's state last, so the device works again on
// every backend.
TEST_CASE("halResetDevice makes a device whose kernel failed usable again", "[reset][errors]") {
    int device = 0;
    HAL_REQUIRE_OK(halGetDevice(&device));
    {
        cts::Module module;
        halFunction failing = nullptr;
        if (!cts::loadKernel("fail_with_code", module, &failing)) return;
        halStream stream = nullptr;
        HAL_REQUIRE_OK(halCreateStream(&stream));
        HAL_REQUIRE_OK(halLaunchKernel(failing, {2, 1, 1}, {1, 1, 1}, 0, nullptr, 0, stream));
        CHECK(halSynchronizeStream(stream) == HAL_ERROR_LAUNCH_FAILED);
        // Where the vendor keeps the fault, the reset's own wait meets it once more.
        const halError reset = halResetDevice(device);
        CHECK((reset == HAL_SUCCESS || reset == HAL_ERROR_LAUNCH_FAILED));
    }
    cts::Module module;
    halFunction fill = nullptr;
    REQUIRE(cts::loadKernel("fill_u32", module, &fill));
    constexpr uint32_t kCount = 256;
    cts::DeviceMemory out(kCount * sizeof(uint32_t));
    void* outPtr = out.get();
    const uint32_t value = 0xABCD, n = kCount;
    cts::Stream stream;
    HAL_REQUIRE_OK(halMemsetAsync(outPtr, out.size(), 0, out.size(), stream));
    HAL_REQUIRE_OK(
        cts::launch1d(fill, n, 64, {cts::arg(outPtr), cts::arg(value), cts::arg(n)}, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    std::vector<uint32_t> result(kCount);
    HAL_REQUIRE_OK(halMemcpy(result.data(), out.size(), outPtr, out.size(), HAL_MEMCPY_DEFAULT));
    CHECK(result == std::vector<uint32_t>(kCount, value));
    HAL_CHECK_OK(halSynchronizeDevice());
}
