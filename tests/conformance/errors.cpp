// Error reporting: names and descriptions of every code, the thread-local error detail.
#include <cstring>
#include <set>
#include <thread>
#include <utility>

#include "cts.hpp"

namespace {

const std::pair<halError, const char*> kErrors[] = {
    {HAL_SUCCESS, "HAL_SUCCESS"},
    {HAL_ERROR_INVALID_VALUE, "HAL_ERROR_INVALID_VALUE"},
    {HAL_ERROR_INVALID_HANDLE, "HAL_ERROR_INVALID_HANDLE"},
    {HAL_ERROR_OUT_OF_MEMORY, "HAL_ERROR_OUT_OF_MEMORY"},
    {HAL_ERROR_NOT_READY, "HAL_ERROR_NOT_READY"},
    {HAL_ERROR_NOT_SUPPORTED, "HAL_ERROR_NOT_SUPPORTED"},
    {HAL_ERROR_NO_DEVICE, "HAL_ERROR_NO_DEVICE"},
    {HAL_ERROR_BACKEND_NOT_FOUND, "HAL_ERROR_BACKEND_NOT_FOUND"},
    {HAL_ERROR_BACKEND_INCOMPATIBLE, "HAL_ERROR_BACKEND_INCOMPATIBLE"},
    {HAL_ERROR_LAUNCH_FAILED, "HAL_ERROR_LAUNCH_FAILED"},
    {HAL_ERROR_BACKEND, "HAL_ERROR_BACKEND"},
    {HAL_ERROR_INVALID_DEVICE, "HAL_ERROR_INVALID_DEVICE"},
    {HAL_ERROR_INVALID_IMAGE, "HAL_ERROR_INVALID_IMAGE"},
    {HAL_ERROR_NOT_FOUND, "HAL_ERROR_NOT_FOUND"},
    {HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED, "HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED"},
    {HAL_ERROR_STREAM_CAPTURE_INVALIDATED, "HAL_ERROR_STREAM_CAPTURE_INVALIDATED"},
    {HAL_ERROR_STREAM_CAPTURE_UNJOINED, "HAL_ERROR_STREAM_CAPTURE_UNJOINED"},
    {HAL_ERROR_STREAM_CAPTURE_ISOLATION, "HAL_ERROR_STREAM_CAPTURE_ISOLATION"},
    {HAL_ERROR_STREAM_CAPTURE_WRONG_THREAD, "HAL_ERROR_STREAM_CAPTURE_WRONG_THREAD"},
    {HAL_ERROR_STREAM_CAPTURE_UNMATCHED, "HAL_ERROR_STREAM_CAPTURE_UNMATCHED"},
    {HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED"},
    {HAL_ERROR_HOST_MEMORY_NOT_REGISTERED, "HAL_ERROR_HOST_MEMORY_NOT_REGISTERED"},
    {HAL_ERROR_UNKNOWN, "HAL_ERROR_UNKNOWN"},
};

// The calling thread's error detail, copied before any further polyhal call can replace it.
std::string lastMessage() {
    return halGetLastErrorMessage();
}

}  // namespace

TEST_CASE("halGetErrorName names every error code", "[errors]") {
    for (const auto& [error, name] : kErrors) {
        CHECK(std::string(halGetErrorName(error)) == name);
    }
    CHECK(std::string(halGetErrorName(static_cast<halError>(12345))) == "HAL_ERROR_UNRECOGNIZED");
    CHECK(std::string(halGetErrorName(HAL_ERROR_FORCE_UINT32)) == "HAL_ERROR_UNRECOGNIZED");
}

TEST_CASE("halGetErrorString describes every error code differently", "[errors]") {
    std::set<std::string> descriptions;
    for (const auto& [error, name] : kErrors) {
        INFO(name);
        const char* text = halGetErrorString(error);
        REQUIRE(text != nullptr);
        CHECK(std::strlen(text) > 0);
        descriptions.insert(text);
    }
    CHECK(descriptions.size() == std::size(kErrors));
    const char* unknown = halGetErrorString(static_cast<halError>(12345));
    REQUIRE(unknown != nullptr);
    CHECK(std::strlen(unknown) > 0);
}

TEST_CASE("a thread with no failure has an empty error message", "[errors]") {
    std::string message = "not read";
    std::thread([&] {
        int count = 0;
        halGetDeviceCount(&count);
        message = lastMessage();
    }).join();
    CHECK(message.empty());
}

TEST_CASE("the error message describes the failure and survives successful calls", "[errors]") {
    REQUIRE(halSetDevice(987654) == HAL_ERROR_INVALID_DEVICE);
    const std::string message = lastMessage();
    CHECK_THAT(message, Catch::Contains("987654"));

    int count = 0;
    HAL_REQUIRE_OK(halGetDeviceCount(&count));
    CHECK(lastMessage() == message);
}

TEST_CASE("the error message is per thread", "[errors]") {
    REQUIRE(halSetDevice(987654) == HAL_ERROR_INVALID_DEVICE);
    const std::string mine = lastMessage();
    std::string theirs;
    std::thread([&] {
        halGetDeviceCount(nullptr);
        theirs = lastMessage();
    }).join();
    CHECK_FALSE(theirs.empty());
    CHECK(theirs != mine);
    CHECK(lastMessage() == mine);
}
