// Asynchronous failures: reported exactly once, only by the calls hal.h names, and never sticky
// (a reported failure leaves the stream, its later events and the device clean).
#include <cstdint>

#include "kernels.hpp"

namespace {

// Launches fail_with_code on `stream` and returns the module that must outlive the launch, or
// false after printing the skip reason.
bool launchFailingKernel(cts::Module& module, halStream stream) {
    halFunction failing = nullptr;
    if (!cts::loadKernel("fail_with_code", module, &failing)) return false;
    const halDim3 one = {1, 1, 1};
    HAL_REQUIRE_OK(halLaunchKernel(failing, one, one, 0, nullptr, 0, stream));
    return true;
}

}  // namespace

TEST_CASE("a reported failure is not sticky: later events and streams are clean",
          "[kernel][errors][failure]") {
    cts::Module module;
    cts::Stream stream;
    if (!launchFailingKernel(module, stream)) return;
    CHECK(halSynchronizeStream(stream) == HAL_ERROR_LAUNCH_FAILED);
    HAL_CHECK_OK(halSynchronizeStream(stream));
    cts::Event after;
    HAL_REQUIRE_OK(halRecordEvent(after, stream));
    HAL_CHECK_OK(halSynchronizeEvent(after));
    HAL_CHECK_OK(halQueryEvent(after));

    SECTION("on the default stream, across halResetDevice") {
        halFunction failing = nullptr;
        HAL_REQUIRE_OK(halModuleGetFunction(&failing, module.get(), "fail_with_code"));
        const halDim3 one = {1, 1, 1};
        HAL_REQUIRE_OK(halLaunchKernel(failing, one, one, 0, nullptr, 0, nullptr));
        CHECK(halSynchronizeDevice() == HAL_ERROR_LAUNCH_FAILED);
        int device = 0;
        HAL_REQUIRE_OK(halGetDevice(&device));
        module.release();  // the reset unloads it
        HAL_CHECK_OK(halResetDevice(device));
        halEvent event = nullptr;
        HAL_REQUIRE_OK(halCreateEvent(&event));
        HAL_REQUIRE_OK(halRecordEvent(event, nullptr));
        HAL_CHECK_OK(halSynchronizeEvent(event));
        HAL_CHECK_OK(halQueryEvent(event));
        HAL_CHECK_OK(halSynchronizeStream(nullptr));
        HAL_CHECK_OK(halDestroyEvent(event));
    }
}

TEST_CASE("a failure is reported by the stream even after an event saw its work finish",
          "[kernel][errors][failure]") {
    cts::Module module;
    cts::Stream stream;
    if (!launchFailingKernel(module, stream)) return;
    cts::Event event;
    HAL_REQUIRE_OK(halRecordEvent(event, stream));
    // Events report completion; the failure belongs to the stream.
    HAL_CHECK_OK(halSynchronizeEvent(event));
    HAL_CHECK_OK(halQueryEvent(event));
    CHECK(halSynchronizeStream(stream) == HAL_ERROR_LAUNCH_FAILED);
    CHECK_THAT(std::string(halGetLastErrorMessage()), Catch::Contains("fail_with_code"));
    HAL_CHECK_OK(halSynchronizeStream(stream));
}

TEST_CASE("calls that do not report asynchronous failures leave them to the stream",
          "[kernel][errors][failure]") {
    cts::Module module;
    if (!launchFailingKernel(module, nullptr)) return;

    SECTION("halMalloc succeeds and halSynchronizeStream(NULL) reports the failure once") {
        void* memory = nullptr;
        HAL_REQUIRE_OK(halMalloc(&memory, 4096));
        CHECK(memory != nullptr);
        HAL_CHECK_OK(halFree(memory));
        CHECK(halSynchronizeStream(nullptr) == HAL_ERROR_LAUNCH_FAILED);
        CHECK_THAT(std::string(halGetLastErrorMessage()), Catch::Contains("fail_with_code"));
        HAL_CHECK_OK(halSynchronizeStream(nullptr));
    }
    SECTION("halMemcpy and halMemset succeed and halQueryStream(NULL) reports it once") {
        cts::DeviceMemory memory(64);
        unsigned char host[64] = {};
        HAL_CHECK_OK(halMemset(memory.get(), 64, 0x5a, 64));
        HAL_CHECK_OK(halMemcpy(host, sizeof host, memory.get(), 64, HAL_MEMCPY_DEFAULT));
        CHECK(host[63] == 0x5a);
        halError status = HAL_ERROR_NOT_READY;
        cts::waitUntil([&] { return (status = halQueryStream(nullptr)) != HAL_ERROR_NOT_READY; });
        CHECK(status == HAL_ERROR_LAUNCH_FAILED);
        HAL_CHECK_OK(halQueryStream(nullptr));
    }
    SECTION("halModuleUnload succeeds and halSynchronizeDevice reports it once") {
        HAL_CHECK_OK(halModuleUnload(module.release()));
        CHECK(halSynchronizeDevice() == HAL_ERROR_LAUNCH_FAILED);
        CHECK_THAT(std::string(halGetLastErrorMessage()), Catch::Contains("fail_with_code"));
        HAL_CHECK_OK(halSynchronizeDevice());
        HAL_CHECK_OK(halSynchronizeStream(nullptr));
    }
}

TEST_CASE("a copy touching another device leaves that device's failure to it",
          "[multi_device][failure]") {
    int count = 0;
    HAL_REQUIRE_OK(halGetDeviceCount(&count));
    if (count < 2) return cts::skip("needs two devices");
    HAL_REQUIRE_OK(halSetDevice(1));
    void* remote = nullptr;
    HAL_REQUIRE_OK(halMalloc(&remote, 64));
    HAL_REQUIRE_OK(halMemset(remote, 64, 0x33, 64));
    {
        cts::Module module;
        if (!launchFailingKernel(module, nullptr)) {
            halSetDevice(0);
            return;
        }
        HAL_REQUIRE_OK(halSetDevice(0));
        cts::DeviceMemory local(64);
        HAL_CHECK_OK(halMemcpy(local.get(), 64, remote, 64, HAL_MEMCPY_DEVICE_TO_DEVICE));
        HAL_CHECK_OK(halMemcpyAsync(local.get(), 64, remote, 64, HAL_MEMCPY_DEFAULT, nullptr));
        HAL_CHECK_OK(halSynchronizeDevice());
        unsigned char host[64] = {};
        HAL_CHECK_OK(halMemcpy(host, sizeof host, local.get(), 64, HAL_MEMCPY_DEFAULT));
        CHECK(host[0] == 0x33);
        HAL_REQUIRE_OK(halSetDevice(1));
        CHECK(halSynchronizeStream(nullptr) == HAL_ERROR_LAUNCH_FAILED);
        HAL_CHECK_OK(halSynchronizeDevice());
        HAL_CHECK_OK(halFree(remote));
    }
    HAL_REQUIRE_OK(halSetDevice(0));
}
