// Streams and events: completion, capture, cross-stream waits, timing and failures.
#include <chrono>
#include <thread>

#include "plugin_fixture.hpp"

using namespace opencl_test;

namespace {

// Enqueues a host-to-host copy of `value` into `target`: work whose completion the host sees.
void copyValue(const Stream& stream, int* target, const int* value) {
    REQUIRE_OK(
        plugin().memcpyAsync(stream.get(), target, value, sizeof *value, HAL_MEMCPY_HOST_TO_HOST));
}

}  // namespace

TEST_CASE("a new stream and a never-recorded event are complete and impose no wait") {
    Stream stream;
    Event event;
    CHECK(plugin().streamQuery(stream.get()) == HAL_SUCCESS);
    CHECK(plugin().eventQuery(event.get()) == HAL_SUCCESS);
    CHECK(plugin().eventSynchronize(event.get()) == HAL_SUCCESS);
    REQUIRE_OK(plugin().streamWaitEvent(stream.get(), event.get()));
    const int value = 7;
    int target = 0;
    copyValue(stream, &target, &value);
    stream.synchronize();
    CHECK(target == 7);
}

TEST_CASE("an event captures the work submitted before it") {
    Stream stream;
    Event event;
    Gate gate;
    gate.block(stream);
    REQUIRE_OK(plugin().eventRecord(event.get(), stream.get()));
    CHECK(plugin().eventQuery(event.get()) == HAL_ERROR_NOT_READY);
    CHECK(plugin().streamQuery(stream.get()) == HAL_ERROR_NOT_READY);
    gate.open();
    REQUIRE_OK(plugin().eventSynchronize(event.get()));
    CHECK(plugin().eventQuery(event.get()) == HAL_SUCCESS);
    stream.synchronize();
    CHECK(plugin().streamQuery(stream.get()) == HAL_SUCCESS);
}

TEST_CASE("a stream waiting for an event runs its later work after the captured work") {
    Stream producer, consumer;
    Event event;
    Gate gate;
    gate.block(producer);
    REQUIRE_OK(plugin().eventRecord(event.get(), producer.get()));
    REQUIRE_OK(plugin().streamWaitEvent(consumer.get(), event.get()));
    const int value = 42;
    int target = 0;
    copyValue(consumer, &target, &value);
    CHECK(plugin().streamQuery(consumer.get()) == HAL_ERROR_NOT_READY);
    CHECK(target == 0);
    gate.open();
    consumer.synchronize();
    CHECK(target == 42);
}

TEST_CASE("recording again moves the event; waits already enqueued keep their point") {
    Stream first, waiting, second;
    Event event;
    Gate gate;
    gate.block(first);
    REQUIRE_OK(plugin().eventRecord(event.get(), first.get()));
    REQUIRE_OK(plugin().streamWaitEvent(waiting.get(), event.get()));
    REQUIRE_OK(plugin().eventRecord(event.get(), second.get()));
    REQUIRE_OK(plugin().eventSynchronize(event.get()));  // second is idle
    CHECK(plugin().streamQuery(waiting.get()) == HAL_ERROR_NOT_READY);
    gate.open();
    waiting.synchronize();
}

TEST_CASE("waits built from an event hold after the event is destroyed") {
    Stream producer, consumer;
    Gate gate;
    gate.block(producer);
    {
        Event event;
        REQUIRE_OK(plugin().eventRecord(event.get(), producer.get()));
        REQUIRE_OK(plugin().streamWaitEvent(consumer.get(), event.get()));
    }
    const int value = 5;
    int target = 0;
    copyValue(consumer, &target, &value);
    CHECK(plugin().streamQuery(consumer.get()) == HAL_ERROR_NOT_READY);
    gate.open();
    consumer.synchronize();
    CHECK(target == 5);
}

TEST_CASE("elapsed time spans the work between two events") {
    Stream stream;
    Event start, end;
    REQUIRE_OK(plugin().eventRecord(start.get(), stream.get()));
    REQUIRE_OK(plugin().launchHostFunc(
        stream.get(), [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(20)); },
        nullptr));
    REQUIRE_OK(plugin().eventRecord(end.get(), stream.get()));
    REQUIRE_OK(plugin().eventSynchronize(end.get()));
    float forward = 0.0f, backward = 0.0f, same = 1.0f;
    REQUIRE_OK(plugin().eventElapsedTime(&forward, start.get(), end.get()));
    REQUIRE_OK(plugin().eventElapsedTime(&backward, end.get(), start.get()));
    REQUIRE_OK(plugin().eventElapsedTime(&same, start.get(), start.get()));
    CHECK(forward >= 19.0f);  // the host function slept 20 ms in between
    CHECK(backward == Approx(-forward));
    CHECK(same == 0.0f);
}

TEST_CASE("completion times are on the host's steady clock, within what the host saw") {
    auto steadyNow = [] {
        return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now().time_since_epoch())
                                         .count());
    };
    Stream stream;
    Event first, second, never;
    Gate gate;
    gate.block(stream);
    REQUIRE_OK(plugin().eventRecord(first.get(), stream.get()));
    REQUIRE_OK(plugin().launchHostFunc(
        stream.get(), [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(20)); },
        nullptr));
    REQUIRE_OK(plugin().eventRecord(second.get(), stream.get()));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const uint64_t opened = steadyNow();
    gate.open();
    REQUIRE_OK(plugin().eventSynchronize(second.get()));
    const uint64_t finished = steadyNow();
    uint64_t firstAt = 0, secondAt = 0;
    REQUIRE_OK(plugin().eventCompletionTime(first.get(), &firstAt));
    REQUIRE_OK(plugin().eventCompletionTime(second.get(), &secondAt));
    // The clocks' offset is measured to within microseconds; 2 ms leaves room for a loaded
    // machine.
    constexpr uint64_t kTolerance = 2'000'000;
    CHECK(firstAt + kTolerance >= opened);
    CHECK(secondAt <= finished + kTolerance);
    CHECK(secondAt - firstAt >= 19'000'000);  // the host function slept 20 ms in between
    uint64_t unused = 0;
    CHECK(plugin().eventCompletionTime(never.get(), &unused) == HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("device synchronisation waits for every stream of the device") {
    Stream a, b;
    Gate gate;
    gate.block(a);
    gate.block(b);
    const int value = 3;
    int targetA = 0, targetB = 0;
    copyValue(a, &targetA, &value);
    copyValue(b, &targetB, &value);
    std::thread opener([&gate] { gate.open(); });
    REQUIRE_OK(plugin().deviceSynchronize(device()));
    opener.join();
    CHECK(targetA == 3);
    CHECK(targetB == 3);
    CHECK(plugin().streamQuery(a.get()) == HAL_SUCCESS);
    CHECK(plugin().streamQuery(b.get()) == HAL_SUCCESS);
}

TEST_CASE("a failure of queued work is reported once, with OpenCL's error name") {
    Stream stream;
    Event event;
    void* native = nullptr;
    REQUIRE_OK(plugin().streamGetNativeHandle(stream.get(), &native));
    auto queue = static_cast<cl_command_queue>(native);
    cl_context context = nullptr;
    REQUIRE(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr) ==
            CL_SUCCESS);
    // Work the application put in the queue itself, failing after the plugin's event marker is
    // queued behind it. The failure passes only through commands whose events are still held:
    // PoCL 3.1 aborts the process when a failure reaches a command whose event was released.
    cl_int error = CL_SUCCESS;
    cl_event failing = clCreateUserEvent(context, &error);
    REQUIRE(failing != nullptr);
    cl_event barrier = nullptr;
    REQUIRE(clEnqueueBarrierWithWaitList(queue, 1, &failing, &barrier) == CL_SUCCESS);
    REQUIRE_OK(plugin().eventRecord(event.get(), stream.get()));
    REQUIRE(clSetUserEventStatus(failing, CL_OUT_OF_RESOURCES) == CL_SUCCESS);
    // Whether a failed user event fails the commands waiting on it is the implementation's
    // choice: PoCL fails them; Intel's CPU runtime completes them (the barrier ends CL_COMPLETE).
    cl_int barrierStatus = CL_QUEUED;
    clWaitForEvents(1, &barrier);
    REQUIRE(clGetEventInfo(barrier, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof barrierStatus,
                           &barrierStatus, nullptr) == CL_SUCCESS);
    if (barrierStatus >= 0) {
        WARN(
            "skipped: this OpenCL implementation does not pass a failed user event's status "
            "on to the commands waiting on it, so nothing fails in the queue");
        REQUIRE_OK(plugin().streamSynchronize(stream.get()));
        clReleaseEvent(barrier);
        clReleaseEvent(failing);
        return;
    }

    // Events report that the work ended; the failure is the stream's to report (plugin.h).
    CHECK(plugin().eventSynchronize(event.get()) == HAL_SUCCESS);
    CHECK(plugin().eventQuery(event.get()) == HAL_SUCCESS);
    CHECK(plugin().streamSynchronize(stream.get()) == HAL_ERROR_LAUNCH_FAILED);
    CHECK(lastError().find("work on the stream failed: CL_") != std::string::npos);
    CHECK(plugin().streamSynchronize(stream.get()) == HAL_SUCCESS);  // reported once
    CHECK(plugin().streamQuery(stream.get()) == HAL_SUCCESS);
    clReleaseEvent(barrier);
    clReleaseEvent(failing);
}
