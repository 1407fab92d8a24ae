// CUDA's legacy default stream as an option (halSetDefaultStreamMode, POLYHAL_DEFAULT_STREAM):
// the implicit waits between the default stream and the blocking streams, HAL_STREAM_NON_BLOCKING,
// events and capture. The run cts.<backend>.legacy_default_stream repeats these cases with
// POLYHAL_DEFAULT_STREAM=legacy in the environment.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cts.hpp"

namespace {

// Makes the default stream legacy for one test case, then restores the mode it found.
class LegacyDefaultStream {
  public:
    LegacyDefaultStream() {
        HAL_REQUIRE_OK(halGetDefaultStreamMode(&previous_));
        HAL_REQUIRE_OK(halSetDefaultStreamMode(HAL_DEFAULT_STREAM_LEGACY));
    }
    ~LegacyDefaultStream() { halSetDefaultStreamMode(previous_); }
    LegacyDefaultStream(const LegacyDefaultStream&) = delete;
    LegacyDefaultStream& operator=(const LegacyDefaultStream&) = delete;

  private:
    halDefaultStreamMode previous_ = HAL_DEFAULT_STREAM_ORDINARY;
};

// A host function that notes whether `gate` had finished when it ran.
struct AfterGate {
    const cts::Gate* gate;
    std::atomic<bool> ran{false};
    std::atomic<bool> gateFinished{false};

    void enqueue(halStream stream) { HAL_REQUIRE_OK(halLaunchHostFunc(stream, &run, this)); }
    static void run(void* opaque) {
        auto* self = static_cast<AfterGate*>(opaque);
        self->gateFinished.store(self->gate->finished());
        self->ran.store(true);
    }
};

// Makes sure `stream` has run a host function: work given to it then runs at once where nothing
// holds it, so that a missing implicit wait shows.
void warm(halStream stream) {
    std::atomic<bool> ran{false};
    cts::enqueueSet(stream, &ran);
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
}

}  // namespace

TEST_CASE("the default stream mode follows POLYHAL_DEFAULT_STREAM and halSetDefaultStreamMode",
          "[stream][legacy]") {
    const char* environment = std::getenv("POLYHAL_DEFAULT_STREAM");
    const bool legacyAsked = environment != nullptr && std::strcmp(environment, "legacy") == 0;
    halDefaultStreamMode mode = HAL_DEFAULT_STREAM_MODE_FORCE_UINT32;
    HAL_REQUIRE_OK(halGetDefaultStreamMode(&mode));
    CHECK(mode == (legacyAsked ? HAL_DEFAULT_STREAM_LEGACY : HAL_DEFAULT_STREAM_ORDINARY));
    {
        LegacyDefaultStream legacy;
        HAL_REQUIRE_OK(halGetDefaultStreamMode(&mode));
        CHECK(mode == HAL_DEFAULT_STREAM_LEGACY);
    }
    CHECK(halSetDefaultStreamMode(static_cast<halDefaultStreamMode>(2)) ==
          HAL_ERROR_INVALID_VALUE);
    CHECK(std::string(halGetLastErrorMessage()).find("HAL_DEFAULT_STREAM_LEGACY") !=
          std::string::npos);
}

TEST_CASE("under the legacy default stream, the default stream waits for the blocking streams",
          "[stream][legacy]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    warm(nullptr);
    cts::Stream blocking;
    cts::Gate gate;
    gate.enqueue(blocking);
    // Switched on after the blocking stream was given its work: that work counts too.
    LegacyDefaultStream legacy;
    AfterGate after{&gate};
    after.enqueue(nullptr);
    REQUIRE(cts::waitUntil([&] { return gate.entered(); }));
    CHECK(halQueryStream(nullptr) == HAL_ERROR_NOT_READY);
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(nullptr));
    CHECK(after.ran.load());
    CHECK(after.gateFinished.load());
    CHECK_FALSE(gate.timedOut());
}

TEST_CASE("under the legacy default stream, a blocking stream waits for the default stream",
          "[stream][legacy]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    LegacyDefaultStream legacy;
    cts::Stream blocking;
    warm(blocking);
    cts::Gate gate;
    gate.enqueue(nullptr);
    AfterGate after{&gate};
    after.enqueue(blocking);
    REQUIRE(cts::waitUntil([&] { return gate.entered(); }));
    CHECK(halQueryStream(blocking) == HAL_ERROR_NOT_READY);
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(blocking));
    CHECK(after.gateFinished.load());
    CHECK_FALSE(gate.timedOut());
}

TEST_CASE("under the legacy default stream, an event recorded on it follows the blocking streams",
          "[stream][legacy][event]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    LegacyDefaultStream legacy;
    cts::Stream blocking;
    cts::Event event(HAL_EVENT_DISABLE_TIMING);
    cts::Gate gate;
    gate.enqueue(blocking);
    HAL_REQUIRE_OK(halRecordEvent(event, nullptr));
    REQUIRE(cts::waitUntil([&] { return gate.entered(); }));
    CHECK(halQueryEvent(event) == HAL_ERROR_NOT_READY);
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeEvent(event));
    CHECK(gate.finished());
}

TEST_CASE("under the legacy default stream, the default stream follows a destroyed stream's work",
          "[stream][legacy]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    LegacyDefaultStream legacy;
    warm(nullptr);
    cts::Gate gate;
    {
        cts::Stream blocking;
        gate.enqueue(blocking);
    }
    AfterGate after{&gate};
    after.enqueue(nullptr);
    REQUIRE(cts::waitUntil([&] { return gate.entered(); }));
    CHECK(halQueryStream(nullptr) == HAL_ERROR_NOT_READY);
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(nullptr));
    CHECK(after.gateFinished.load());
}

TEST_CASE("HAL_STREAM_NON_BLOCKING streams neither wait for nor hold a legacy default stream",
          "[stream][legacy][independent_streams]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    LegacyDefaultStream legacy;
    cts::Stream nonBlocking(0, HAL_STREAM_NON_BLOCKING);
    cts::DeviceMemory memory(256);
    SECTION("work on the stream runs while the default stream is held") {
        cts::Gate gate;
        gate.enqueue(nullptr);
        HAL_REQUIRE_OK(halMemsetAsync(memory.get(), 256, 1, 256, nonBlocking));
        HAL_REQUIRE_OK(halSynchronizeStream(nonBlocking));
        CHECK_FALSE(gate.finished());
    }
    SECTION("work on the default stream runs while the stream is held") {
        cts::Gate gate;
        gate.enqueue(nonBlocking);
        HAL_REQUIRE_OK(halMemsetAsync(memory.get(), 256, 1, 256, nullptr));
        HAL_REQUIRE_OK(halSynchronizeStream(nullptr));
        CHECK_FALSE(gate.finished());
    }
    HAL_REQUIRE_OK(halSynchronizeDevice());
}

TEST_CASE("under the legacy default stream, default-stream work during a blocking stream's "
          "capture invalidates the capture",
          "[stream][legacy][graph]") {
    LegacyDefaultStream legacy;
    cts::Stream captured;
    cts::Stream nonBlocking(0, HAL_STREAM_NON_BLOCKING);
    cts::DeviceMemory memory(256);
    SECTION("a blocking stream's capture is refused the implicit wait") {
        HAL_REQUIRE_OK(halStreamBeginCapture(captured, HAL_CAPTURE_MODE_RELAXED));
        HAL_REQUIRE_OK(halMemsetAsync(memory.get(), 256, 1, 256, captured));
        CHECK(halMemsetAsync(memory.get(), 256, 2, 256, nullptr) ==
              HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        CHECK(std::string(halGetLastErrorMessage()).find("legacy default stream") !=
              std::string::npos);
        halGraph graph = nullptr;
        CHECK(halStreamEndCapture(captured, &graph) == HAL_ERROR_STREAM_CAPTURE_INVALIDATED);
    }
    SECTION("captured work does not wait for the default stream, nor a non-blocking capture") {
        HAL_REQUIRE_OK(halMemsetAsync(memory.get(), 256, 2, 256, nullptr));
        HAL_REQUIRE_OK(halStreamBeginCapture(nonBlocking, HAL_CAPTURE_MODE_RELAXED));
        HAL_REQUIRE_OK(halMemsetAsync(memory.get(), 256, 1, 256, nonBlocking));
        HAL_REQUIRE_OK(halMemsetAsync(memory.get(), 256, 3, 256, nullptr));
        halGraph graph = nullptr;
        HAL_REQUIRE_OK(halStreamEndCapture(nonBlocking, &graph));
        HAL_REQUIRE_OK(halStreamBeginCapture(captured, HAL_CAPTURE_MODE_RELAXED));
        HAL_REQUIRE_OK(halGraphLaunch(graph, captured));
        halGraph outer = nullptr;
        HAL_REQUIRE_OK(halStreamEndCapture(captured, &outer));
        HAL_REQUIRE_OK(halGraphLaunch(outer, captured));
        HAL_REQUIRE_OK(halSynchronizeStream(captured));
        HAL_REQUIRE_OK(halGraphDestroy(outer));
        HAL_REQUIRE_OK(halGraphDestroy(graph));
    }
    HAL_REQUIRE_OK(halSynchronizeDevice());
}
