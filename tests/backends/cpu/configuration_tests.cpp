// Configuration through the environment. The plugin ABI initialises a backend once per process,
// so each configuration runs in a process of its own: these tests are hidden ("[.name]") and
// CMakeLists.txt runs each tag with its environment.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "backend_fixture.hpp"

using namespace cpu_tests;

namespace {

std::string environment(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "";
}

}  // namespace

TEST_CASE("POLYHAL_CPU_DEVICES and POLYHAL_CPU_MEMORY give devices with separate capacities",
          "[.two_small_devices]") {
    REQUIRE(environment("POLYHAL_CPU_DEVICES") == "2");
    REQUIRE(environment("POLYHAL_CPU_MEMORY") == "65536");
    int count = 0;
    REQUIRE(backend().deviceGetCount(&count) == HAL_SUCCESS);
    REQUIRE(count == 2);
    halPluginDevice devices[2] = {};
    for (int i = 0; i < 2; ++i) {
        REQUIRE(backend().deviceOpen(i, &devices[i]) == HAL_SUCCESS);
        halPluginDeviceInfo info = {};
        info.size = sizeof info;
        REQUIRE(backend().deviceGetInfo(devices[i], &info) == HAL_SUCCESS);
        CHECK_THAT(info.name, Catch::StartsWith("polyhal CPU device " + std::to_string(i) + " ("));
        CHECK(info.totalMemory == 65536);
    }

    void* whole = nullptr;
    REQUIRE(backend().memAllocDevice(devices[0], 65536, &whole) == HAL_SUCCESS);
    void* more = nullptr;
    CHECK(backend().memAllocDevice(devices[0], 1, &more) == HAL_ERROR_OUT_OF_MEMORY);
    CHECK_THAT(lastError(), Catch::Contains("cannot allocate 1 bytes") &&
                                Catch::Contains("0 of 65536 bytes available"));

    // The other device keeps its own account.
    void* other = nullptr;
    REQUIRE(backend().memAllocDevice(devices[1], 65536, &other) == HAL_SUCCESS);
    REQUIRE(backend().memFreeDevice(devices[1], other) == HAL_SUCCESS);

    // Freed memory is available again; allocations are charged in 256-byte units.
    REQUIRE(backend().memFreeDevice(devices[0], whole) == HAL_SUCCESS);
    void* pieces[256] = {};
    for (void*& piece : pieces) {
        REQUIRE(backend().memAllocDevice(devices[0], 1, &piece) == HAL_SUCCESS);
    }
    CHECK(backend().memAllocDevice(devices[0], 1, &more) == HAL_ERROR_OUT_OF_MEMORY);
    for (void* piece : pieces) REQUIRE(backend().memFreeDevice(devices[0], piece) == HAL_SUCCESS);
}

TEST_CASE("a malformed POLYHAL_CPU_MEMORY fails initialisation and names the variable",
          "[.malformed_memory]") {
    REQUIRE(environment("POLYHAL_CPU_MEMORY") == "64k");
    CHECK(table().initialize() == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(lastError(), Catch::Contains("POLYHAL_CPU_MEMORY='64k'"));
}

TEST_CASE("a device count of zero fails initialisation and names the variable", "[.zero_devices]") {
    REQUIRE(environment("POLYHAL_CPU_DEVICES") == "0");
    CHECK(table().initialize() == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(lastError(), Catch::Contains("POLYHAL_CPU_DEVICES='0'"));
}
