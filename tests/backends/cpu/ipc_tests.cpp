// Sharing memory and events between processes, at the plugin's level: the plugin opens its own
// handles too (the core refuses that; the plugin need not), which lets one process check that
// both mappings see the same bytes and both events the same records.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <thread>

#include "backend_fixture.hpp"

using namespace cpu_tests;

namespace {
constexpr size_t kShareable = size_t{2} << 20;
}  // namespace

TEST_CASE("a large allocation is shared memory: a second mapping sees the same bytes", "[ipc]") {
    void* memory = nullptr;
    REQUIRE(backend().memAllocDevice(device0(), kShareable, &memory) == HAL_SUCCESS);
    halPluginIpcHandle handle;
    REQUIRE(backend().ipcMemGetHandle(device0(), memory, &handle) == HAL_SUCCESS);
    void* opened = nullptr;
    REQUIRE(backend().ipcMemOpenHandle(device0(), &handle, kShareable, &opened) == HAL_SUCCESS);
    CHECK(opened != memory);
    std::memset(memory, 0x5a, 4096);
    CHECK(static_cast<unsigned char*>(opened)[4095] == 0x5a);
    static_cast<unsigned char*>(opened)[0] = 0xc3;
    CHECK(static_cast<unsigned char*>(memory)[0] == 0xc3);
    CHECK(backend().ipcMemOpenHandle(device0(), &handle, kShareable * 2, &opened) ==
          HAL_ERROR_INVALID_VALUE);
    REQUIRE(backend().ipcMemCloseHandle(device0(), opened) == HAL_SUCCESS);
    CHECK(backend().ipcMemCloseHandle(device0(), opened) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(lastError(), Catch::Contains("not memory opened"));
    REQUIRE(backend().memFreeDevice(device0(), memory) == HAL_SUCCESS);
    // The descriptor is closed: the handle names nothing any more.
    CHECK(backend().ipcMemOpenHandle(device0(), &handle, kShareable, &opened) ==
          HAL_ERROR_NOT_FOUND);
}

TEST_CASE("a small allocation is plain host memory and cannot be exported", "[ipc]") {
    void* memory = nullptr;
    REQUIRE(backend().memAllocDevice(device0(), 4096, &memory) == HAL_SUCCESS);
    halPluginIpcHandle handle;
    CHECK(backend().ipcMemGetHandle(device0(), memory, &handle) == HAL_ERROR_NOT_SUPPORTED);
    CHECK_THAT(lastError(), Catch::Contains("not shareable"));
    REQUIRE(backend().memFreeDevice(device0(), memory) == HAL_SUCCESS);
}

TEST_CASE("an opened interprocess event shares the records of the exported one", "[ipc]") {
    halPluginEvent event = nullptr;
    REQUIRE(backend().eventCreate(device0(), HAL_EVENT_INTERPROCESS | HAL_EVENT_DISABLE_TIMING,
                                  &event) == HAL_SUCCESS);
    halPluginIpcHandle handle;
    REQUIRE(backend().ipcEventGetHandle(event, &handle) == HAL_SUCCESS);
    halPluginEvent opened = nullptr;
    REQUIRE(backend().ipcEventOpenHandle(device0(), &handle, &opened) == HAL_SUCCESS);
    halPluginStream stream = nullptr;
    REQUIRE(backend().streamCreate(device0(), 0, 0, &stream) == HAL_SUCCESS);
    static std::atomic<bool> release{false};
    REQUIRE(backend().launchHostFunc(
                stream,
                [](void*) {
                    while (!release.load()) std::this_thread::yield();
                },
                nullptr) == HAL_SUCCESS);
    REQUIRE(backend().eventRecord(opened, stream) == HAL_SUCCESS);  // recorded through the copy
    CHECK(backend().eventQuery(event) == HAL_ERROR_NOT_READY);
    CHECK(backend().eventQuery(opened) == HAL_ERROR_NOT_READY);
    release.store(true);
    CHECK(backend().eventSynchronize(event) == HAL_SUCCESS);
    CHECK(backend().eventQuery(opened) == HAL_SUCCESS);
    REQUIRE(backend().streamSynchronize(stream) == HAL_SUCCESS);
    REQUIRE(backend().streamDestroy(stream) == HAL_SUCCESS);
    REQUIRE(backend().eventDestroy(opened) == HAL_SUCCESS);
    halPluginEvent plain = nullptr;
    REQUIRE(backend().eventCreate(device0(), HAL_EVENT_DISABLE_TIMING, &plain) == HAL_SUCCESS);
    CHECK(backend().ipcEventGetHandle(plain, &handle) == HAL_ERROR_INVALID_VALUE);
    REQUIRE(backend().eventDestroy(plain) == HAL_SUCCESS);
    REQUIRE(backend().eventDestroy(event) == HAL_SUCCESS);
}
