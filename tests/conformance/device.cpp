// Setup and devices: initialisation, versions, device selection and properties, device-wide
// synchronisation.
#include <cstddef>
#include <cstring>
#include <thread>

#include "cts.hpp"

TEST_CASE("halInit succeeds and repeats its result", "[device]") {
    HAL_REQUIRE_OK(halInit());
    HAL_REQUIRE_OK(halInit());
}

TEST_CASE("halGetVersion reports the header's version", "[device]") {
    int major = -1, minor = -1, patch = -1;
    HAL_REQUIRE_OK(halGetVersion(&major, &minor, &patch));
    CHECK(major == HAL_VERSION_MAJOR);
    CHECK(minor == HAL_VERSION_MINOR);
    CHECK(patch == HAL_VERSION_PATCH);
    HAL_CHECK_OK(halGetVersion(nullptr, &minor, nullptr));
    HAL_CHECK_OK(halGetVersion(nullptr, nullptr, nullptr));
}

TEST_CASE("halGetBackendName names the current device's backend", "[device]") {
    const char* name = nullptr;
    HAL_REQUIRE_OK(halGetBackendName(&name));
    REQUIRE(name != nullptr);
    CHECK(std::strlen(name) > 0);
    CHECK(std::string(name) == cts::deviceProperties().backend);
    CHECK(halGetBackendName(nullptr) == HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("halGetDeviceCount counts at least one device", "[device]") {
    int count = 0;
    HAL_REQUIRE_OK(halGetDeviceCount(&count));
    CHECK(count >= 1);
    CHECK(halGetDeviceCount(nullptr) == HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("halSetDevice refuses ordinals out of range", "[device]") {
    int count = 0;
    HAL_REQUIRE_OK(halGetDeviceCount(&count));
    CHECK(halSetDevice(count) == HAL_ERROR_INVALID_DEVICE);
    CHECK(halSetDevice(-1) == HAL_ERROR_INVALID_DEVICE);
    int device = -1;
    HAL_REQUIRE_OK(halGetDevice(&device));
    CHECK(device == 0);
    CHECK(halGetDevice(nullptr) == HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("a new thread starts on device 0", "[device]") {
    int device = -1;
    halError status = HAL_ERROR_UNKNOWN;
    std::thread([&] { status = halGetDevice(&device); }).join();
    CHECK(status == HAL_SUCCESS);
    CHECK(device == 0);
}

TEST_CASE("halGetDeviceProperties describes every device", "[device]") {
    int count = 0;
    HAL_REQUIRE_OK(halGetDeviceCount(&count));
    for (int device = 0; device < count; ++device) {
        INFO("device " << device);
        halDeviceProperties props;
        std::memset(&props, 0, sizeof props);
        props.size = sizeof props;
        HAL_REQUIRE_OK(halGetDeviceProperties(device, &props));
        CHECK(props.size == sizeof props);
        CHECK(std::strlen(props.name) > 0);
        CHECK(std::strlen(props.name) < sizeof props.name);
        CHECK(std::strlen(props.backend) > 0);
        CHECK(props.ordinal == device);
        CHECK(props.backendOrdinal >= 0);
        CHECK(props.backendOrdinal <= device);
        CHECK(props.totalMemory > 0);
        CHECK(props.computeUnits >= 1);
        CHECK(props.maxThreadsPerBlock >= 1);
    }
}

TEST_CASE("halGetDeviceProperties validates its arguments", "[device]") {
    int count = 0;
    HAL_REQUIRE_OK(halGetDeviceCount(&count));
    halDeviceProperties props;
    std::memset(&props, 0, sizeof props);
    props.size = sizeof props;
    CHECK(halGetDeviceProperties(0, nullptr) == HAL_ERROR_INVALID_VALUE);
    CHECK(halGetDeviceProperties(count, &props) == HAL_ERROR_INVALID_DEVICE);
    CHECK(halGetDeviceProperties(-1, &props) == HAL_ERROR_INVALID_DEVICE);

    SECTION("a size smaller than size plus name is refused") {
        props.size = offsetof(halDeviceProperties, name) + sizeof props.name - 1;
        CHECK(halGetDeviceProperties(0, &props) == HAL_ERROR_INVALID_VALUE);
        props.size = 0;
        CHECK(halGetDeviceProperties(0, &props) == HAL_ERROR_INVALID_VALUE);
    }
    SECTION("an older, smaller struct is filled only as far as its size") {
        const size_t oldSize = offsetof(halDeviceProperties, backend);
        std::memset(&props, 0x5a, sizeof props);
        props.size = oldSize;
        HAL_REQUIRE_OK(halGetDeviceProperties(0, &props));
        CHECK(std::strlen(props.name) > 0);
        const auto* bytes = reinterpret_cast<const unsigned char*>(&props);
        size_t untouched = 0;
        for (size_t i = oldSize; i < sizeof props; ++i) untouched += bytes[i] == 0x5a;
        CHECK(untouched == sizeof props - oldSize);
    }
}

TEST_CASE("halGetStreamPriorityRange orders least after greatest", "[device][stream]") {
    int least = 1000, greatest = -1000;
    HAL_REQUIRE_OK(halGetStreamPriorityRange(&least, &greatest));
    CHECK(least >= greatest);
    if ((cts::deviceProperties().capabilities & HAL_DEVICE_CAP_STREAM_PRIORITIES) == 0) {
        CHECK(least == 0);
        CHECK(greatest == 0);
    }
    HAL_CHECK_OK(halGetStreamPriorityRange(nullptr, &greatest));
    HAL_CHECK_OK(halGetStreamPriorityRange(&least, nullptr));
    HAL_CHECK_OK(halGetStreamPriorityRange(nullptr, nullptr));
}

TEST_CASE("halSynchronizeDevice waits for every stream", "[device][sync]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Stream a, b, c;
    std::atomic<bool> doneA{false}, doneB{false}, doneC{false}, doneDefault{false};
    const halStream streams[] = {a, b, c, nullptr};
    std::atomic<bool>* flags[] = {&doneA, &doneB, &doneC, &doneDefault};
    for (int i = 0; i < 4; ++i) {
        cts::enqueueSleep(streams[i], std::chrono::milliseconds(30));
        cts::enqueueSet(streams[i], flags[i]);
    }
    HAL_REQUIRE_OK(halSynchronizeDevice());
    CHECK(doneA.load());
    CHECK(doneB.load());
    CHECK(doneC.load());
    CHECK(doneDefault.load());
}

TEST_CASE("halSynchronizeDevice waits for the work of streams destroyed before it",
          "[device][sync]") {
    // As cuCtxSynchronize: destroying a stream does not cancel or detach its submitted work.
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    std::atomic<bool> done{false};
    halStream doomed = nullptr;
    HAL_REQUIRE_OK(halCreateStream(&doomed));
    cts::enqueueSleep(doomed, std::chrono::milliseconds(50));
    cts::enqueueSet(doomed, &done);
    HAL_REQUIRE_OK(halDestroyStream(doomed));  // returns at once; the work still runs
    HAL_REQUIRE_OK(halSynchronizeDevice());
    CHECK(done.load());
}
