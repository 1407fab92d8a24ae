// The Level Zero backend selected through the public API, as a user selects it.
// CTest runs this with POLYHAL_BACKEND=level_zero.
#include <polyhal/hal.h>

#include <catch2/catch.hpp>
#include <string>

TEST_CASE("halInit with POLYHAL_BACKEND=level_zero says why there is no device", "[core]") {
    const halError status = halInit();
    if (status == HAL_SUCCESS) {
        // A machine with an Intel GPU and its driver: the no-driver path cannot happen here.
        const char* backend = nullptr;
        REQUIRE(halGetBackendName(&backend) == HAL_SUCCESS);
        CHECK(std::string(backend) == "level_zero");
        return;
    }
    const std::string message = halGetLastErrorMessage();
    INFO("message: " << message);
    // Named explicitly, the backend is never replaced by another one.
    REQUIRE(status == HAL_ERROR_NO_DEVICE);
    CHECK_THAT(message, Catch::Contains("level_zero"));
    CHECK_THAT(message, Catch::Contains("Level Zero"));
    const bool namesCause = message.find("ZE_RESULT_") != std::string::npos ||
                            message.find("libze_loader.so.1") != std::string::npos;
    CHECK(namesCause);
    // Every later call fails the same way.
    int count = -1;
    CHECK(halGetDeviceCount(&count) == HAL_ERROR_NO_DEVICE);
}
