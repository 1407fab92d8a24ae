// The hip plugin through polyhal's public API against the libamdhip64.so double with two devices:
// an application that uses HIP itself keeps its current device whatever polyhal does.
#define CATCH_CONFIG_MAIN
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <polyhal/hal.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "every_entry.hpp"

namespace {

template <class Fn>
Fn runtimeFunction(const char* name) {
    // The library the plugin opened (the double, first on the library path).
    static void* library = dlopen("libamdhip64.so.6", RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(library != nullptr);
    void* symbol = dlsym(library, name);
    REQUIRE(symbol != nullptr);
    return reinterpret_cast<Fn>(symbol);
}

int currentDevice() {
    int device = -1;
    REQUIRE(runtimeFunction<hipError_t (*)(int*)>("hipGetDevice")(&device) == hipSuccess);
    return device;
}

}  // namespace

TEST_CASE("every polyhal call leaves the calling thread's current HIP device as it found it",
          "[hip][context]") {
    REQUIRE(halInit() == HAL_SUCCESS);
    // The application works on device 1 while it uses polyhal on device 0.
    REQUIRE(runtimeFunction<hipError_t (*)(int)>("hipSetDevice")(1) == hipSuccess);
    polyhal::doubles::callEveryEntry(
        [](const char* call) {
            INFO(call);
            CHECK(currentDevice() == 1);
        },
        "");
}

namespace {

uint64_t graphLaunches() {
    return runtimeFunction<uint64_t (*)()>("polyhalHipDoubleGraphLaunches")();
}

void countCall(void* calls) {
    ++*static_cast<std::atomic<int>*>(calls);
}

}  // namespace

TEST_CASE("a graph of device and page-locked memory and host functions is one hipGraphLaunch "
          "per launch; one that copies pageable memory is replayed",
          "[hip][graph]") {
    REQUIRE(halInit() == HAL_SUCCESS);
    REQUIRE(halSetDevice(0) == HAL_SUCCESS);
    constexpr size_t kBytes = 256;
    halStream stream = nullptr;
    void* device = nullptr;
    void* pinned = nullptr;
    REQUIRE(halCreateStream(&stream) == HAL_SUCCESS);
    REQUIRE(halMalloc(&device, kBytes) == HAL_SUCCESS);
    REQUIRE(halMallocHost(&pinned, 2 * kBytes) == HAL_SUCCESS);
    auto* bytes = static_cast<unsigned char*>(pinned);
    std::fill(bytes, bytes + 2 * kBytes, 0);
    std::vector<unsigned char> pageable(kBytes, 0);
    std::atomic<int> calls{0};

    const auto capture = [&](void* target) {
        REQUIRE(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL) == HAL_SUCCESS);
        REQUIRE(halMemsetAsync(device, kBytes, 0x6B, kBytes, stream) == HAL_SUCCESS);
        REQUIRE(halLaunchHostFunc(stream, countCall, &calls) == HAL_SUCCESS);
        REQUIRE(halMemcpyAsync(target, kBytes, device, kBytes, HAL_MEMCPY_DEVICE_TO_HOST,
                               stream) == HAL_SUCCESS);
        halMemcpy3DParams box{};
        box.size = sizeof box;
        box.dst = bytes + kBytes;
        box.dstPitch = 32;
        box.dstSlicePitch = 80;
        box.src = device;
        box.srcPitch = 16;
        box.srcSlicePitch = 48;
        box.width = 8;
        box.height = 2;
        box.depth = 2;
        box.kind = HAL_MEMCPY_DEVICE_TO_HOST;
        REQUIRE(halMemcpy3DAsync(&box, stream) == HAL_SUCCESS);
        halGraph graph = nullptr;
        REQUIRE(halStreamEndCapture(stream, &graph) == HAL_SUCCESS);
        return graph;
    };

    halGraph native = capture(pinned);
    uint64_t before = graphLaunches();
    REQUIRE(halGraphLaunch(native, stream) == HAL_SUCCESS);
    REQUIRE(halGraphLaunch(native, stream) == HAL_SUCCESS);
    REQUIRE(halSynchronizeStream(stream) == HAL_SUCCESS);
    CHECK(graphLaunches() - before == 2);
    CHECK(calls == 2);
    CHECK(std::vector<unsigned char>(bytes, bytes + kBytes) ==
          std::vector<unsigned char>(kBytes, 0x6B));
    for (size_t slice = 0; slice < 2; ++slice) {
        for (size_t row = 0; row < 2; ++row) {
            const unsigned char* got = bytes + kBytes + slice * 80 + row * 32;
            CHECK(std::vector<unsigned char>(got, got + 8) == std::vector<unsigned char>(8, 0x6B));
        }
    }
    CHECK(bytes[kBytes + 8] == 0);  // between rows: untouched
    REQUIRE(halGraphDestroy(native) == HAL_SUCCESS);

    halGraph replayed = capture(pageable.data());
    before = graphLaunches();
    REQUIRE(halGraphLaunch(replayed, stream) == HAL_SUCCESS);
    REQUIRE(halSynchronizeStream(stream) == HAL_SUCCESS);
    CHECK(graphLaunches() == before);
    CHECK(calls == 3);
    CHECK(pageable == std::vector<unsigned char>(kBytes, 0x6B));
    REQUIRE(halGraphDestroy(replayed) == HAL_SUCCESS);

    REQUIRE(halFree(device) == HAL_SUCCESS);
    REQUIRE(halFreeHost(pinned) == HAL_SUCCESS);
    REQUIRE(halDestroyStream(stream) == HAL_SUCCESS);
}
