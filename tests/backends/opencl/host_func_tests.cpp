// Host functions: stream order, blocking, calls back into the plugin, and stream destruction.
#include <atomic>
#include <chrono>
#include <thread>

#include "plugin_fixture.hpp"

using namespace opencl_test;

TEST_CASE("a host function runs after the work before it and before the work after it") {
    Stream stream;
    struct Order {
        int input = 0;
        int seen = -1;   // input as the host function saw it
        int output = 0;  // set by the host function
    } order;
    const int one = 1;
    int copiedOutput = 0;
    REQUIRE_OK(plugin().memcpyAsync(stream.get(), &order.input, &one, sizeof one,
                                    HAL_MEMCPY_HOST_TO_HOST));
    REQUIRE_OK(plugin().launchHostFunc(
        stream.get(),
        [](void* data) {
            auto* order = static_cast<Order*>(data);
            order->seen = order->input;
            order->output = 2;
        },
        &order));
    REQUIRE_OK(plugin().memcpyAsync(stream.get(), &copiedOutput, &order.output, sizeof(int),
                                    HAL_MEMCPY_HOST_TO_HOST));
    stream.synchronize();
    CHECK(order.seen == 1);
    CHECK(copiedOutput == 2);
}

TEST_CASE("work after a blocking host function waits until it returns") {
    Stream stream;
    Gate gate;
    gate.block(stream);
    const int value = 9;
    int target = 0;
    REQUIRE_OK(
        plugin().memcpyAsync(stream.get(), &target, &value, sizeof value, HAL_MEMCPY_HOST_TO_HOST));
    CHECK(plugin().streamQuery(stream.get()) == HAL_ERROR_NOT_READY);
    CHECK(target == 0);
    gate.open();
    stream.synchronize();
    CHECK(target == 9);
}

TEST_CASE("a blocked host function holds back only its own stream") {
    Stream blocked, free;
    Gate gate;
    gate.block(blocked);
    std::atomic<bool> ran{false};
    REQUIRE_OK(plugin().launchHostFunc(
        free.get(), [](void* flag) { static_cast<std::atomic<bool>*>(flag)->store(true); }, &ran));
    free.synchronize();
    CHECK(ran);
    CHECK(plugin().streamQuery(blocked.get()) == HAL_ERROR_NOT_READY);
}

TEST_CASE("a host function may wait for work it submits to another stream") {
    Stream stream, other;
    struct Nested {
        halPluginStream other;
        void* memory;
        int value = 11;
        int result = 0;
        halError status = HAL_ERROR_UNKNOWN;
    };
    DeviceMemory memory(sizeof(int));
    Nested nested{other.get(), memory.get()};
    REQUIRE_OK(plugin().launchHostFunc(
        stream.get(),
        [](void* data) {
            auto* nested = static_cast<Nested*>(data);
            const halPluginDispatchTable& table = plugin();
            halError status = table.memcpyAsync(nested->other, nested->memory, &nested->value,
                                                sizeof(int), HAL_MEMCPY_HOST_TO_DEVICE);
            if (status == HAL_SUCCESS) {
                status = table.memcpyAsync(nested->other, &nested->result, nested->memory,
                                           sizeof(int), HAL_MEMCPY_DEVICE_TO_HOST);
            }
            if (status == HAL_SUCCESS) status = table.streamSynchronize(nested->other);
            nested->status = status;
        },
        &nested));
    stream.synchronize();
    CHECK(nested.status == HAL_SUCCESS);
    CHECK(nested.result == 11);
}

TEST_CASE("destroying a stream does not wait for its host functions, which still run") {
    Gate gate;
    struct Flag {
        std::mutex mutex;
        std::condition_variable changed;
        bool ran = false;
    } flag;
    Stream stream;
    gate.block(stream);
    REQUIRE_OK(plugin().launchHostFunc(
        stream.get(),
        [](void* data) {
            auto* flag = static_cast<Flag*>(data);
            std::lock_guard lock(flag->mutex);
            flag->ran = true;
            flag->changed.notify_all();
        },
        &flag));
    stream.destroy();  // returns while the gate still holds the stream's work back
    {
        std::lock_guard lock(flag.mutex);
        CHECK(!flag.ran);
    }
    gate.open();
    std::unique_lock lock(flag.mutex);
    CHECK(flag.changed.wait_for(lock, std::chrono::seconds(60), [&flag] { return flag.ran; }));
}
