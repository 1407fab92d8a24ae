// Events: capture, re-recording, cross-stream waits and timing.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "backend_fixture.hpp"

using namespace cpu_tests;

namespace {

void setFlag(void* flag) {
    static_cast<std::atomic<bool>*>(flag)->store(true);
}

void sleep20ms(void*) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

struct ValueHandoff {
    int written = 0;
    int seen = -1;
};

void writeValue(void* data) {
    static_cast<ValueHandoff*>(data)->written = 42;
}
void readValue(void* data) {
    auto& handoff = *static_cast<ValueHandoff*>(data);
    handoff.seen = handoff.written;
}

}  // namespace

TEST_CASE("a never-recorded event is complete and imposes no wait", "[event]") {
    Event event;
    CHECK(backend().eventQuery(event.get()) == HAL_SUCCESS);
    CHECK(backend().eventSynchronize(event.get()) == HAL_SUCCESS);
    Stream stream;
    std::atomic<bool> ran{false};
    REQUIRE(backend().streamWaitEvent(stream.get(), event.get()) == HAL_SUCCESS);
    REQUIRE(backend().launchHostFunc(stream.get(), setFlag, &ran) == HAL_SUCCESS);
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    CHECK(ran.load());
}

TEST_CASE("an event completes when the work before its record does", "[event]") {
    const uint32_t flags =
        GENERATE(HAL_EVENT_DEFAULT, HAL_EVENT_DISABLE_TIMING, HAL_EVENT_BLOCKING_SYNC);
    Event event(flags);
    Stream stream;
    Gate gate;
    REQUIRE(backend().launchHostFunc(stream.get(), Gate::wait, &gate) == HAL_SUCCESS);
    REQUIRE(backend().eventRecord(event.get(), stream.get()) == HAL_SUCCESS);
    CHECK(backend().eventQuery(event.get()) == HAL_ERROR_NOT_READY);
    gate.open();
    REQUIRE(backend().eventSynchronize(event.get()) == HAL_SUCCESS);
    CHECK(backend().eventQuery(event.get()) == HAL_SUCCESS);
    CHECK_FALSE(gate.timedOut());
}

TEST_CASE("recording again moves the event to the new point", "[event]") {
    Event event;
    Stream blocked;
    Stream idle;
    Gate gate;
    REQUIRE(backend().launchHostFunc(blocked.get(), Gate::wait, &gate) == HAL_SUCCESS);
    REQUIRE(backend().eventRecord(event.get(), blocked.get()) == HAL_SUCCESS);
    CHECK(backend().eventQuery(event.get()) == HAL_ERROR_NOT_READY);
    REQUIRE(backend().eventRecord(event.get(), idle.get()) == HAL_SUCCESS);
    REQUIRE(backend().eventSynchronize(event.get()) == HAL_SUCCESS);
    gate.open();
    REQUIRE(backend().streamSynchronize(blocked.get()) == HAL_SUCCESS);
}

TEST_CASE("a stream waiting on an event runs after the captured work, without blocking the host",
          "[event]") {
    Stream producer;
    Stream consumer;
    Event event;
    Gate gate;
    ValueHandoff handoff;
    REQUIRE(backend().launchHostFunc(producer.get(), Gate::wait, &gate) == HAL_SUCCESS);
    REQUIRE(backend().launchHostFunc(producer.get(), writeValue, &handoff) == HAL_SUCCESS);
    REQUIRE(backend().eventRecord(event.get(), producer.get()) == HAL_SUCCESS);
    // Returns although the producer is blocked: the host does not wait.
    REQUIRE(backend().streamWaitEvent(consumer.get(), event.get()) == HAL_SUCCESS);
    REQUIRE(backend().launchHostFunc(consumer.get(), readValue, &handoff) == HAL_SUCCESS);
    CHECK(backend().streamQuery(consumer.get()) == HAL_ERROR_NOT_READY);
    gate.open();
    REQUIRE(backend().streamSynchronize(consumer.get()) == HAL_SUCCESS);
    CHECK(handoff.seen == 42);
    CHECK_FALSE(gate.timedOut());
}

TEST_CASE("a wait keeps the record it saw when the event is re-recorded or destroyed", "[event]") {
    Stream producer;
    Stream consumer;
    Stream idle;
    Event event;
    Gate gate;
    std::atomic<bool> consumed{false};
    REQUIRE(backend().launchHostFunc(producer.get(), Gate::wait, &gate) == HAL_SUCCESS);
    REQUIRE(backend().eventRecord(event.get(), producer.get()) == HAL_SUCCESS);
    REQUIRE(backend().streamWaitEvent(consumer.get(), event.get()) == HAL_SUCCESS);
    REQUIRE(backend().launchHostFunc(consumer.get(), setFlag, &consumed) == HAL_SUCCESS);
    SECTION("re-recorded on an idle stream") {
        REQUIRE(backend().eventRecord(event.get(), idle.get()) == HAL_SUCCESS);
        REQUIRE(backend().eventSynchronize(event.get()) == HAL_SUCCESS);
    }
    SECTION("destroyed") {
        event.destroy();
    }
    CHECK(backend().streamQuery(consumer.get()) == HAL_ERROR_NOT_READY);
    CHECK_FALSE(consumed.load());
    gate.open();
    REQUIRE(backend().streamSynchronize(consumer.get()) == HAL_SUCCESS);
    CHECK(consumed.load());
}

TEST_CASE("elapsed time spans the work between two events", "[event]") {
    Stream stream;
    Event start;
    Event end;
    REQUIRE(backend().eventRecord(start.get(), stream.get()) == HAL_SUCCESS);
    REQUIRE(backend().launchHostFunc(stream.get(), sleep20ms, nullptr) == HAL_SUCCESS);
    REQUIRE(backend().eventRecord(end.get(), stream.get()) == HAL_SUCCESS);
    REQUIRE(backend().eventSynchronize(end.get()) == HAL_SUCCESS);
    float ms = 0;
    REQUIRE(backend().eventElapsedTime(&ms, start.get(), end.get()) == HAL_SUCCESS);
    CHECK(ms >= 20.0f);
}

TEST_CASE("a stale marker does not overwrite the timestamp of a newer record", "[event]") {
    Stream reference;
    Stream blocked;
    Event start;
    Event moved;
    Gate gate;
    REQUIRE(backend().eventRecord(start.get(), reference.get()) == HAL_SUCCESS);
    REQUIRE(backend().launchHostFunc(blocked.get(), Gate::wait, &gate) == HAL_SUCCESS);
    REQUIRE(backend().eventRecord(moved.get(), blocked.get()) == HAL_SUCCESS);  // marker waits
    REQUIRE(backend().eventRecord(moved.get(), reference.get()) == HAL_SUCCESS);
    REQUIRE(backend().eventSynchronize(moved.get()) == HAL_SUCCESS);
    float before = 0;
    REQUIRE(backend().eventElapsedTime(&before, start.get(), moved.get()) == HAL_SUCCESS);
    // Let the first record's marker run, clearly later.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate.open();
    REQUIRE(backend().streamSynchronize(blocked.get()) == HAL_SUCCESS);
    float after = 0;
    REQUIRE(backend().eventElapsedTime(&after, start.get(), moved.get()) == HAL_SUCCESS);
    CHECK(after == before);
}

TEST_CASE("elapsed time refuses untimed, unrecorded and pending events", "[event]") {
    Stream stream;
    Event timed;
    REQUIRE(backend().eventRecord(timed.get(), stream.get()) == HAL_SUCCESS);
    REQUIRE(backend().eventSynchronize(timed.get()) == HAL_SUCCESS);
    float ms = 0;

    Event untimed(HAL_EVENT_DISABLE_TIMING);
    REQUIRE(backend().eventRecord(untimed.get(), stream.get()) == HAL_SUCCESS);
    REQUIRE(backend().eventSynchronize(untimed.get()) == HAL_SUCCESS);
    CHECK(backend().eventElapsedTime(&ms, timed.get(), untimed.get()) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(lastError(), Catch::Contains("HAL_EVENT_DISABLE_TIMING"));

    Event unrecorded;
    CHECK(backend().eventElapsedTime(&ms, unrecorded.get(), timed.get()) ==
          HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(lastError(), Catch::Contains("never recorded"));

    Gate gate;
    Event pending;
    REQUIRE(backend().launchHostFunc(stream.get(), Gate::wait, &gate) == HAL_SUCCESS);
    REQUIRE(backend().eventRecord(pending.get(), stream.get()) == HAL_SUCCESS);
    CHECK(backend().eventElapsedTime(&ms, timed.get(), pending.get()) == HAL_ERROR_NOT_READY);
    gate.open();
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
}
