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
    HAL_REQUIRE_OK(halCreateStream(&stream));
    HAL_REQUIRE_OK(halCreateEvent(&event));
    HAL_REQUIRE_OK(halMalloc(&memory, 4096));
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
