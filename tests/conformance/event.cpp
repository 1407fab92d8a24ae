// Events: recording, querying, waiting, ordering between streams, timing, handle validation.
#include <cstdint>
#include <cstring>
#include <string>

#include "cts.hpp"

using namespace std::chrono_literals;

TEST_CASE("events are created with valid flags only", "[event]") {
    for (uint32_t flags : {HAL_EVENT_DEFAULT, HAL_EVENT_DISABLE_TIMING, HAL_EVENT_BLOCKING_SYNC,
                           HAL_EVENT_DISABLE_TIMING | HAL_EVENT_BLOCKING_SYNC}) {
        INFO("flags " << flags);
        halEvent event = nullptr;
        HAL_REQUIRE_OK(halCreateEventWithFlag(&event, flags));
        REQUIRE(event != nullptr);
        HAL_CHECK_OK(halDestroyEvent(event));
    }
    halEvent event = nullptr;
    HAL_REQUIRE_OK(halCreateEvent(&event));
    HAL_CHECK_OK(halDestroyEvent(event));
    CHECK(halCreateEvent(nullptr) == HAL_ERROR_INVALID_VALUE);
    CHECK(halCreateEventWithFlag(nullptr, HAL_EVENT_DEFAULT) == HAL_ERROR_INVALID_VALUE);
    CHECK(halCreateEventWithFlag(&event, 0x100u) == HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("a never-recorded event is complete", "[event][sync]") {
    cts::Event event;
    HAL_CHECK_OK(halQueryEvent(event));
    HAL_CHECK_OK(halSynchronizeEvent(event));
}

TEST_CASE("a never-recorded event imposes no wait", "[event][sync]") {
    cts::Event event;
    cts::Stream stream;
    HAL_REQUIRE_OK(halStreamWaitEvent(stream, event));
    HAL_CHECK_OK(halSynchronizeStream(stream));
}

TEST_CASE("an event recorded on an idle stream completes", "[event][sync]") {
    cts::Stream stream;
    cts::Event event;
    HAL_REQUIRE_OK(halRecordEvent(event, stream));
    HAL_CHECK_OK(halSynchronizeEvent(event));
    HAL_CHECK_OK(halQueryEvent(event));
    cts::Event onDefault;
    HAL_REQUIRE_OK(halRecordEvent(onDefault, nullptr));
    HAL_CHECK_OK(halSynchronizeEvent(onDefault));
}

TEST_CASE("an event is NOT_READY until the work before it is done", "[event][sync]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Stream stream;
    for (uint32_t flags : {HAL_EVENT_DEFAULT, HAL_EVENT_BLOCKING_SYNC}) {
        INFO("flags " << flags);
        cts::Event event(flags);
        cts::Gate gate;
        gate.enqueue(stream);
        HAL_REQUIRE_OK(halRecordEvent(event, stream));
        CHECK(halQueryEvent(event) == HAL_ERROR_NOT_READY);
        gate.open();
        HAL_REQUIRE_OK(halSynchronizeEvent(event));
        CHECK(gate.finished());
        CHECK_FALSE(gate.timedOut());
        HAL_CHECK_OK(halQueryEvent(event));
    }
}

TEST_CASE("work ordered by an event sees the earlier work's result", "[event][ordering]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    // Stream A writes a value into pinned host memory after 20 ms; stream B waits for A's event,
    // then copies the value to the device and back. B must see the value A wrote.
    cts::HostMemory staging(sizeof(uint32_t));
    cts::DeviceMemory device(sizeof(uint32_t));
    uint32_t result = 0;
    *staging.get<uint32_t>() = 0;
    cts::Stream a, b;
    cts::Event written;
    cts::enqueueSleep(a, 20ms);
    HAL_REQUIRE_OK(halLaunchHostFunc(
        a, [](void* p) { *static_cast<uint32_t*>(p) = 0xC0FFEE; }, staging.get()));
    HAL_REQUIRE_OK(halRecordEvent(written, a));
    HAL_REQUIRE_OK(halStreamWaitEvent(b, written));
    HAL_REQUIRE_OK(halMemcpyAsync(device.get(), device.size(), staging.get(), sizeof(uint32_t),
                                  HAL_MEMCPY_HOST_TO_DEVICE, b));
    HAL_REQUIRE_OK(halMemcpyAsync(&result, sizeof result, device.get(), sizeof(uint32_t),
                                  HAL_MEMCPY_DEVICE_TO_HOST, b));
    HAL_REQUIRE_OK(halSynchronizeStream(b));
    CHECK(result == 0xC0FFEEu);
    HAL_REQUIRE_OK(halSynchronizeStream(a));
}

TEST_CASE("halStreamWaitEvent blocks the stream, not the host", "[event][ordering]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Stream a, b;
    cts::Event event;
    cts::Gate gate;
    std::atomic<bool> bRan{false};
    gate.enqueue(a);
    HAL_REQUIRE_OK(halRecordEvent(event, a));
    HAL_REQUIRE_OK(halStreamWaitEvent(b, event));  // returns although A is blocked
    cts::enqueueSet(b, &bRan);
    std::this_thread::sleep_for(20ms);
    CHECK_FALSE(bRan.load());
    CHECK(halQueryStream(b) == HAL_ERROR_NOT_READY);
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(b));
    CHECK(bRan.load());
    CHECK_FALSE(gate.timedOut());
}

TEST_CASE("recording an event again moves it; enqueued waits keep their point", "[event]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Stream a, b;
    cts::Event event, bDone;
    cts::Gate first, second;

    HAL_REQUIRE_OK(halRecordEvent(event, a));
    HAL_REQUIRE_OK(halSynchronizeEvent(event));

    first.enqueue(a);
    HAL_REQUIRE_OK(halRecordEvent(event, a));  // moves the event behind `first`
    CHECK(halQueryEvent(event) == HAL_ERROR_NOT_READY);
    HAL_REQUIRE_OK(halStreamWaitEvent(b, event));  // B waits for `first` only
    // An event, not a host function: `second` may hold the only thread that runs host functions.
    HAL_REQUIRE_OK(halRecordEvent(bDone, b));

    second.enqueue(a);
    HAL_REQUIRE_OK(halRecordEvent(event, a));  // moves it behind `second`

    first.open();
    // `second` is still closed.
    CHECK(cts::waitUntil([&] { return halQueryEvent(bDone) == HAL_SUCCESS; }));
    CHECK(halQueryEvent(event) == HAL_ERROR_NOT_READY);
    second.open();
    HAL_REQUIRE_OK(halSynchronizeEvent(event));
    CHECK(second.finished());
    CHECK_FALSE(first.timedOut());
    CHECK_FALSE(second.timedOut());
}

TEST_CASE("a pending event may be destroyed; waits on it still hold", "[event]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Stream a, b;
    cts::Gate gate;
    std::atomic<bool> aDone{false};
    std::atomic<bool> bSawA{false};
    halEvent event = nullptr;
    HAL_REQUIRE_OK(halCreateEvent(&event));
    gate.enqueue(a);
    cts::enqueueSet(a, &aDone);
    HAL_REQUIRE_OK(halRecordEvent(event, a));
    HAL_REQUIRE_OK(halStreamWaitEvent(b, event));
    HAL_REQUIRE_OK(halDestroyEvent(event));
    struct Check {
        std::atomic<bool>* aDone;
        std::atomic<bool>* bSawA;
    } check{&aDone, &bSawA};
    HAL_REQUIRE_OK(halLaunchHostFunc(
        b,
        [](void* p) {
            auto* c = static_cast<Check*>(p);
            c->bSawA->store(c->aDone->load());
        },
        &check));
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(b));
    CHECK(bSawA.load());
    HAL_REQUIRE_OK(halSynchronizeStream(a));
}

TEST_CASE("elapsed time between events measures the work between them", "[event][timing]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_TIMING_EVENTS);
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Stream stream;
    cts::Event start, end;
    HAL_REQUIRE_OK(halRecordEvent(start, stream));
    cts::enqueueSleep(stream, 50ms);
    HAL_REQUIRE_OK(halRecordEvent(end, stream));
    HAL_REQUIRE_OK(halSynchronizeEvent(end));
    float ms = -1.0f;
    HAL_REQUIRE_OK(halEventElapsedTime(&ms, start, end));
    CHECK(ms >= 45.0f);
    CHECK(ms < 500.0f);
}

TEST_CASE("halEventElapsedTime refuses events it cannot measure", "[event][timing]") {
    cts::Stream stream;
    cts::Event start, end, untimed(HAL_EVENT_DISABLE_TIMING), neverRecorded;
    float ms = 0.0f;
    if ((cts::deviceProperties().capabilities & HAL_DEVICE_CAP_TIMING_EVENTS) == 0) {
        HAL_REQUIRE_OK(halRecordEvent(start, stream));
        HAL_REQUIRE_OK(halRecordEvent(end, stream));
        HAL_REQUIRE_OK(halSynchronizeEvent(end));
        CHECK(halEventElapsedTime(&ms, start, end) == HAL_ERROR_NOT_SUPPORTED);
        return;
    }
    HAL_REQUIRE_OK(halRecordEvent(start, stream));
    HAL_REQUIRE_OK(halRecordEvent(untimed, stream));
    HAL_REQUIRE_OK(halRecordEvent(end, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    HAL_CHECK_OK(halEventElapsedTime(&ms, start, end));
    CHECK(ms >= 0.0f);
    CHECK(halEventElapsedTime(nullptr, start, end) == HAL_ERROR_INVALID_VALUE);
    CHECK(halEventElapsedTime(&ms, start, untimed) == HAL_ERROR_INVALID_VALUE);
    CHECK(halEventElapsedTime(&ms, untimed, end) == HAL_ERROR_INVALID_VALUE);
    CHECK(halEventElapsedTime(&ms, start, neverRecorded) == HAL_ERROR_INVALID_VALUE);
    CHECK(halEventElapsedTime(&ms, nullptr, end) == HAL_ERROR_INVALID_HANDLE);

    SECTION("an event that has not completed is NOT_READY") {
        if (cts::lacksCapability(HAL_DEVICE_CAP_HOST_FUNCTIONS, "HAL_DEVICE_CAP_HOST_FUNCTIONS")) {
            return;
        }
        cts::Gate gate;
        gate.enqueue(stream);
        HAL_REQUIRE_OK(halRecordEvent(end, stream));
        CHECK(halEventElapsedTime(&ms, start, end) == HAL_ERROR_NOT_READY);
        gate.open();
        HAL_REQUIRE_OK(halSynchronizeEvent(end));
    }
}

// The end's stream runs while the start's is held: see [independent_streams] in cts.hpp.
TEST_CASE(
    "halEventElapsedTime: a start event that has not completed is NOT_READY, though the "
    "end has",
    "[event][timing][independent_streams]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_TIMING_EVENTS);
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Stream stream, held;
    cts::Event start, end;
    cts::Gate gate;
    gate.enqueue(held);
    HAL_REQUIRE_OK(halRecordEvent(start, held));
    HAL_REQUIRE_OK(halRecordEvent(end, stream));
    HAL_REQUIRE_OK(halSynchronizeEvent(end));
    float ms = 0.0f;
    CHECK(halEventElapsedTime(&ms, start, end) == HAL_ERROR_NOT_READY);
    CHECK(std::string(halGetLastErrorMessage()).find("start") != std::string::npos);
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeEvent(start));
}

TEST_CASE("a destroyed or foreign event handle is refused", "[event][handles]") {
    halEvent event = nullptr;
    HAL_REQUIRE_OK(halCreateEvent(&event));
    HAL_REQUIRE_OK(halDestroyEvent(event));
    cts::Stream stream;
    cts::Event good;
    HAL_REQUIRE_OK(halRecordEvent(good, stream));
    HAL_REQUIRE_OK(halSynchronizeEvent(good));
    uint64_t local[8] = {};
    const halEvent foreign = reinterpret_cast<halEvent>(local);
    for (const halEvent bad : {event, foreign, static_cast<halEvent>(nullptr)}) {
        INFO((bad == event ? "destroyed event" : bad == nullptr ? "NULL" : "foreign pointer"));
        CHECK(halDestroyEvent(bad) == HAL_ERROR_INVALID_HANDLE);
        CHECK(halRecordEvent(bad, stream) == HAL_ERROR_INVALID_HANDLE);
        CHECK(halQueryEvent(bad) == HAL_ERROR_INVALID_HANDLE);
        CHECK(halSynchronizeEvent(bad) == HAL_ERROR_INVALID_HANDLE);
        CHECK(halStreamWaitEvent(stream, bad) == HAL_ERROR_INVALID_HANDLE);
        float ms = 0;
        CHECK(halEventElapsedTime(&ms, good, bad) == HAL_ERROR_INVALID_HANDLE);
    }
    for (uint64_t word : local) CHECK(word == 0);
}
