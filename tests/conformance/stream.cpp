// Streams: creation and destruction, handle validation, in-order execution, concurrency between
// streams, query and synchronisation, priorities, native handles.
#include <algorithm>
#include <cstring>
#include <vector>

#include "cts.hpp"

TEST_CASE("streams are created and destroyed", "[stream]") {
    halStream stream = nullptr;
    HAL_REQUIRE_OK(halCreateStream(&stream));
    REQUIRE(stream != nullptr);
    HAL_CHECK_OK(halQueryStream(stream));
    HAL_CHECK_OK(halSynchronizeStream(stream));
    HAL_REQUIRE_OK(halDestroyStream(stream));

    CHECK(halCreateStream(nullptr) == HAL_ERROR_INVALID_VALUE);
    CHECK(halCreateStreamWithConfig(nullptr, 0, HAL_STREAM_DEFAULT) == HAL_ERROR_INVALID_VALUE);
    CHECK(halCreateStreamWithConfig(&stream, 0, 0x80000000u) == HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("the default stream is an ordinary stream that cannot be destroyed", "[stream]") {
    HAL_CHECK_OK(halQueryStream(nullptr));
    HAL_CHECK_OK(halSynchronizeStream(nullptr));
    CHECK(halDestroyStream(nullptr) == HAL_ERROR_INVALID_HANDLE);
}

TEST_CASE("a destroyed or foreign stream handle is refused", "[stream][handles]") {
    halStream stream = nullptr;
    HAL_REQUIRE_OK(halCreateStream(&stream));
    HAL_REQUIRE_OK(halDestroyStream(stream));
    int local = 0;
    const halStream foreign = reinterpret_cast<halStream>(&local);
    cts::Event event;
    cts::DeviceMemory memory(256);
    for (const halStream bad : {stream, foreign}) {
        INFO((bad == stream ? "destroyed stream" : "foreign pointer"));
        CHECK(halDestroyStream(bad) == HAL_ERROR_INVALID_HANDLE);
        CHECK(halQueryStream(bad) == HAL_ERROR_INVALID_HANDLE);
        CHECK(halSynchronizeStream(bad) == HAL_ERROR_INVALID_HANDLE);
        CHECK(halStreamWaitEvent(bad, event) == HAL_ERROR_INVALID_HANDLE);
        CHECK(halRecordEvent(event, bad) == HAL_ERROR_INVALID_HANDLE);
        void* native = nullptr;
        CHECK(halStreamGetNativeHandle(bad, &native) == HAL_ERROR_INVALID_HANDLE);
        CHECK(halMemsetAsync(memory.get(), memory.size(), 0, 16, bad) == HAL_ERROR_INVALID_HANDLE);
        CHECK(halMemcpyAsync(memory.get(), memory.size(), memory.get<char>() + 128, 16,
                             HAL_MEMCPY_DEVICE_TO_DEVICE, bad) == HAL_ERROR_INVALID_HANDLE);
        CHECK(halLaunchHostFunc(
                  bad, [](void*) {}, nullptr) == HAL_ERROR_INVALID_HANDLE);
    }
    CHECK(local == 0);
}

TEST_CASE("a stream runs its work in submission order", "[stream][ordering]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    struct Log {
        std::vector<int> order;
        int next = 0;
    } log;
    struct Entry {
        Log* log;
        int value;
    };
    constexpr int kCount = 500;
    std::vector<Entry> entries;
    entries.reserve(kCount);
    cts::Stream stream;
    for (int i = 0; i < kCount; ++i) {
        entries.push_back({&log, i});
        HAL_REQUIRE_OK(halLaunchHostFunc(
            stream,
            [](void* p) {
                auto* entry = static_cast<Entry*>(p);
                entry->log->order.push_back(entry->value);
            },
            &entries.back()));
    }
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    REQUIRE(log.order.size() == size_t{kCount});
    for (int i = 0; i < kCount; ++i) REQUIRE(log.order[i] == i);
}

// See [independent_streams] in cts.hpp.
TEST_CASE("work on one stream runs while another stream is blocked",
          "[stream][concurrency][independent_streams]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    // B's work is device work with pinned memory only: a backend may run every host function on
    // one thread and block on pageable copies, and B must still finish while A is held.
    constexpr size_t kSize = 64 * 1024;
    cts::DeviceMemory device(kSize);
    cts::HostMemory result(kSize);
    std::memset(result.get(), 0, kSize);
    cts::Stream a, b;
    cts::Gate gate;
    gate.enqueue(a);
    HAL_REQUIRE_OK(halMemsetAsync(device.get(), kSize, 0x5A, kSize, b));
    HAL_REQUIRE_OK(
        halMemcpyAsync(result.get(), kSize, device.get(), kSize, HAL_MEMCPY_DEVICE_TO_HOST, b));
    HAL_REQUIRE_OK(halSynchronizeStream(b));
    CHECK_FALSE(gate.finished());
    CHECK(halQueryStream(a) == HAL_ERROR_NOT_READY);
    const auto* bytes = result.get<unsigned char>();
    CHECK(std::all_of(bytes, bytes + kSize, [](unsigned char byte) { return byte == 0x5A; }));
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(a));
    CHECK_FALSE(gate.timedOut());
}

TEST_CASE("halQueryStream reports NOT_READY until the work is done", "[stream][sync]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Stream stream;
    cts::Gate gate;
    gate.enqueue(stream);
    REQUIRE(cts::waitUntil([&] { return gate.entered(); }));
    CHECK(halQueryStream(stream) == HAL_ERROR_NOT_READY);
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(gate.finished());
    CHECK_FALSE(gate.timedOut());
    HAL_CHECK_OK(halQueryStream(stream));
}

TEST_CASE("halQueryStream sees work queued behind a blocked host function", "[stream][sync]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Stream stream;
    cts::Gate gate;
    gate.enqueue(stream);
    std::atomic<bool> ran{false};
    cts::enqueueSet(stream, &ran);
    // Without waiting for the gate to be entered: queued work alone makes the stream busy.
    CHECK(halQueryStream(stream) == HAL_ERROR_NOT_READY);
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(ran.load());
}

TEST_CASE("halDestroyStream does not wait, and the submitted work still runs", "[stream]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Gate gate;
    std::atomic<bool> after{false};
    halStream stream = nullptr;
    HAL_REQUIRE_OK(halCreateStream(&stream));
    gate.enqueue(stream);
    cts::enqueueSet(stream, &after);
    HAL_REQUIRE_OK(halDestroyStream(stream));
    // Had halDestroyStream waited, the gate would have timed out before it returned.
    CHECK_FALSE(gate.timedOut());
    gate.open();
    CHECK(cts::waitUntil([&] { return after.load(); }));
    CHECK_FALSE(gate.timedOut());
}

TEST_CASE("stream priorities outside the range are clamped, not refused", "[stream]") {
    int least = 0, greatest = 0;
    HAL_REQUIRE_OK(halGetStreamPriorityRange(&least, &greatest));
    for (int priority : {least, greatest, greatest - 100, least + 100, (least + greatest) / 2}) {
        INFO("priority " << priority);
        cts::Stream stream(priority, HAL_STREAM_DEFAULT);
        HAL_CHECK_OK(halSynchronizeStream(stream));
    }
}

TEST_CASE("streams of every priority run their work", "[stream]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    int least = 0, greatest = 0;
    HAL_REQUIRE_OK(halGetStreamPriorityRange(&least, &greatest));
    cts::Stream low(least, HAL_STREAM_DEFAULT), high(greatest, HAL_STREAM_DEFAULT);
    std::atomic<bool> lowRan{false}, highRan{false};
    cts::enqueueSet(low, &lowRan);
    cts::enqueueSet(high, &highRan);
    HAL_REQUIRE_OK(halSynchronizeStream(low));
    HAL_REQUIRE_OK(halSynchronizeStream(high));
    CHECK(lowRan.load());
    CHECK(highRan.load());
}

TEST_CASE("halStreamGetNativeHandle returns the backend's queue", "[stream][interop]") {
    void* native = nullptr;
    if ((cts::deviceProperties().capabilities & HAL_DEVICE_CAP_NATIVE_HANDLES) == 0) {
        cts::Stream stream;
        CHECK(halStreamGetNativeHandle(stream, &native) == HAL_ERROR_NOT_SUPPORTED);
        return;
    }
    cts::Stream a, b;
    void* nativeB = nullptr;
    HAL_REQUIRE_OK(halStreamGetNativeHandle(a, &native));
    HAL_REQUIRE_OK(halStreamGetNativeHandle(b, &nativeB));
    CHECK(native != nullptr);
    CHECK(nativeB != nullptr);
    CHECK(native != nativeB);
    void* again = nullptr;
    HAL_REQUIRE_OK(halStreamGetNativeHandle(a, &again));
    CHECK(again == native);
    void* defaultNative = nullptr;
    HAL_CHECK_OK(halStreamGetNativeHandle(nullptr, &defaultNative));
    CHECK(halStreamGetNativeHandle(a, nullptr) == HAL_ERROR_INVALID_VALUE);
}
