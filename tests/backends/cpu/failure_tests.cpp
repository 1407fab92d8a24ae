// Asynchronous failures: a kernel that fails after its launch returned.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "backend_fixture.hpp"
#include "kernel_fixture.hpp"

using namespace cpu_tests;

namespace {

void increment(void* counter) {
    static_cast<std::atomic<int>*>(counter)->fetch_add(1);
}

// Launches fail_in_block over 8 blocks; block 5 returns 7.
void launchFailingKernel(const KernelModule& module, halPluginStream stream) {
    uint32_t failingBlock = 5;
    int32_t value = 7;
    const halKernelArg args[] = {{&failingBlock, sizeof failingBlock}, {&value, sizeof value}};
    REQUIRE(backend().launchKernel(stream, module.function("fail_in_block"), {8, 1, 1}, {1, 1, 1},
                                   0, args, 2) == HAL_SUCCESS);
}

}  // namespace

TEST_CASE("a failing kernel is reported once by the stream, naming the kernel and the value",
          "[failure]") {
    KernelModule module;
    Stream stream;
    std::atomic<int> laterWork{0};
    launchFailingKernel(module, stream.get());
    REQUIRE(backend().launchHostFunc(stream.get(), increment, &laterWork) == HAL_SUCCESS);
    SECTION("by streamSynchronize") {
        CHECK(backend().streamSynchronize(stream.get()) == HAL_ERROR_LAUNCH_FAILED);
    }
    SECTION("by streamQuery") {
        REQUIRE(backend().deviceSynchronize(device0()) == HAL_ERROR_LAUNCH_FAILED);
        // deviceSynchronize took the report: the stream has nothing left to say.
        CHECK(backend().streamQuery(stream.get()) == HAL_SUCCESS);
        launchFailingKernel(module, stream.get());
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        halError status;
        while ((status = backend().streamQuery(stream.get())) == HAL_ERROR_NOT_READY &&
               std::chrono::steady_clock::now() < deadline) {
        }
        CHECK(status == HAL_ERROR_LAUNCH_FAILED);
    }
    CHECK_THAT(lastError(), Catch::Contains("'fail_in_block'") && Catch::Contains("returned 7") &&
                                Catch::Contains("block (5, 0, 0)"));
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    CHECK(backend().streamQuery(stream.get()) == HAL_SUCCESS);
    CHECK(laterWork.load() == 1);  // the stream goes on after a failure
}

TEST_CASE("events report completion, never a failure; the stream reports it once", "[failure]") {
    KernelModule module;
    Stream stream;
    Event before;
    Event after;
    REQUIRE(backend().eventRecord(before.get(), stream.get()) == HAL_SUCCESS);
    launchFailingKernel(module, stream.get());
    REQUIRE(backend().eventRecord(after.get(), stream.get()) == HAL_SUCCESS);
    CHECK(backend().eventSynchronize(after.get()) == HAL_SUCCESS);
    CHECK(backend().eventQuery(after.get()) == HAL_SUCCESS);
    CHECK(backend().eventSynchronize(before.get()) == HAL_SUCCESS);
    CHECK(backend().streamSynchronize(stream.get()) == HAL_ERROR_LAUNCH_FAILED);
    CHECK_THAT(lastError(), Catch::Contains("returned 7"));
    // Reported: nothing sticks to the stream or to events recorded later.
    Event later;
    REQUIRE(backend().eventRecord(later.get(), stream.get()) == HAL_SUCCESS);
    CHECK(backend().eventSynchronize(later.get()) == HAL_SUCCESS);
    CHECK(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
}

TEST_CASE("failures after an unreported one are counted in its report", "[failure]") {
    KernelModule module;
    Stream stream;
    launchFailingKernel(module, stream.get());
    launchFailingKernel(module, stream.get());
    launchFailingKernel(module, stream.get());
    CHECK(backend().streamSynchronize(stream.get()) == HAL_ERROR_LAUNCH_FAILED);
    CHECK_THAT(lastError(), Catch::Contains("and 2 later failure(s)"));
    CHECK(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
}

TEST_CASE("deviceSynchronize reports a failure of a destroyed stream", "[failure]") {
    REQUIRE(backend().deviceSynchronize(device0()) == HAL_SUCCESS);  // nothing left over
    KernelModule module;
    {
        Stream stream;
        launchFailingKernel(module, stream.get());
    }
    CHECK(backend().deviceSynchronize(device0()) == HAL_ERROR_LAUNCH_FAILED);
    CHECK_THAT(lastError(), Catch::Contains("'fail_in_block'"));
    CHECK(backend().deviceSynchronize(device0()) == HAL_SUCCESS);
}

TEST_CASE("failures of several destroyed streams are all accounted for", "[failure]") {
    REQUIRE(backend().deviceSynchronize(device0()) == HAL_SUCCESS);  // nothing left over
    KernelModule module;
    for (int i = 0; i < 3; ++i) {
        Stream stream;
        launchFailingKernel(module, stream.get());
        REQUIRE(backend().streamSynchronize(stream.get()) == HAL_ERROR_LAUNCH_FAILED);
        launchFailingKernel(module, stream.get());  // left for the device
    }
    // One report or several (a stream still running stays for the next call), but each of
    // the three failures is in exactly one of them.
    long accounted = 0;
    for (int call = 0; call < 4; ++call) {
        if (backend().deviceSynchronize(device0()) == HAL_SUCCESS) break;
        const std::string message = lastError();
        const size_t folded = message.find("(and ");
        accounted += 1 + (folded == std::string::npos ? 0 : std::stol(message.substr(folded + 5)));
    }
    CHECK(accounted == 3);
    CHECK(backend().deviceSynchronize(device0()) == HAL_SUCCESS);
}
