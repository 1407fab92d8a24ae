// The hip plugin through polyhal's public API against the libamdhip64.so double with two devices:
// an application that uses HIP itself keeps its current device whatever polyhal does.
#define CATCH_CONFIG_MAIN
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <polyhal/hal.h>

#include <catch2/catch.hpp>

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
