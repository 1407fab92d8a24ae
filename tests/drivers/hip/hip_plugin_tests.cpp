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
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "every_entry.hpp"
#include "graph_scenario.hpp"

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

}  // namespace

TEST_CASE(
    "a graph of device and page-locked memory and host functions is one hipGraphLaunch "
    "per launch; one that copies pageable memory is replayed",
    "[hip][graph]") {
    using polyhal::doubles::GraphScenario;
    REQUIRE(halInit() == HAL_SUCCESS);
    REQUIRE(halSetDevice(0) == HAL_SUCCESS);
    GraphScenario scenario;
    unsigned char* pinned = scenario.pinned();
    const std::vector<unsigned char> filled(GraphScenario::kBytes, 0x6B);

    halGraph native = scenario.capture(pinned, pinned + GraphScenario::kBytes);
    uint64_t before = graphLaunches();
    REQUIRE(halGraphLaunch(native, scenario.stream()) == HAL_SUCCESS);
    REQUIRE(halGraphLaunch(native, scenario.stream()) == HAL_SUCCESS);
    REQUIRE(halSynchronizeStream(scenario.stream()) == HAL_SUCCESS);
    CHECK(graphLaunches() - before == 2);
    CHECK(scenario.calls() == 2);
    CHECK(std::vector<unsigned char>(pinned, pinned + GraphScenario::kBytes) == filled);
    GraphScenario::checkBox(pinned + GraphScenario::kBytes, pinned);
    REQUIRE(halGraphDestroy(native) == HAL_SUCCESS);

    std::vector<unsigned char> pageable(GraphScenario::kBytes, 0);
    halGraph replayed = scenario.capture(pageable.data(), pinned + GraphScenario::kBytes);
    before = graphLaunches();
    REQUIRE(halGraphLaunch(replayed, scenario.stream()) == HAL_SUCCESS);
    REQUIRE(halSynchronizeStream(scenario.stream()) == HAL_SUCCESS);
    CHECK(graphLaunches() == before);
    CHECK(scenario.calls() == 3);
    CHECK(pageable == filled);
    REQUIRE(halGraphDestroy(replayed) == HAL_SUCCESS);
}
