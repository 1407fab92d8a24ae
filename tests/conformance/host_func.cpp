// Host functions: run in stream order on a host thread, with the user's data, and refused the
// polyhal calls that would reach the device.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cts.hpp"

using namespace std::chrono_literals;

TEST_CASE("halLaunchHostFunc validates its arguments", "[host_func]") {
    if ((cts::deviceProperties().capabilities & HAL_DEVICE_CAP_HOST_FUNCTIONS) == 0) {
        int data = 0;
        CHECK(halLaunchHostFunc(
                  nullptr, [](void*) {}, &data) == HAL_ERROR_NOT_SUPPORTED);
        return;
    }
    cts::Stream stream;
    CHECK(halLaunchHostFunc(stream, nullptr, nullptr) == HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("a host function receives its user data", "[host_func]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    struct Seen {
        std::atomic<void*> data{nullptr};
        std::atomic<int> calls{0};
    } seen;
    cts::Stream stream;
    HAL_REQUIRE_OK(halLaunchHostFunc(
        stream,
        [](void* p) {
            auto* s = static_cast<Seen*>(p);
            s->data.store(p);
            s->calls.fetch_add(1);
        },
        &seen));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(seen.data.load() == &seen);
    CHECK(seen.calls.load() == 1);
}

TEST_CASE("a host function runs after the copies submitted before it", "[host_func][ordering]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    constexpr size_t kCount = 1 << 16;
    std::vector<uint32_t> source(kCount), result(kCount, 0);
    for (size_t i = 0; i < kCount; ++i) source[i] = static_cast<uint32_t>(i * 2654435761u);
    cts::DeviceMemory device(kCount * sizeof(uint32_t));
    struct Check {
        const std::vector<uint32_t>* expected;
        const std::vector<uint32_t>* result;
        std::atomic<bool> matched{false};
    } check{&source, &result};
    cts::Stream stream;
    HAL_REQUIRE_OK(halMemcpyAsync(device.get(), device.size(), source.data(), device.size(),
                                  HAL_MEMCPY_HOST_TO_DEVICE, stream));
    HAL_REQUIRE_OK(halMemcpyAsync(result.data(), result.size() * sizeof(uint32_t), device.get(),
                                  device.size(), HAL_MEMCPY_DEVICE_TO_HOST, stream));
    HAL_REQUIRE_OK(halLaunchHostFunc(
        stream,
        [](void* p) {
            auto* c = static_cast<Check*>(p);
            c->matched.store(*c->expected == *c->result);
        },
        &check));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(check.matched.load());
}

TEST_CASE("work after a host function starts after it returns", "[host_func][ordering]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::HostMemory staging(sizeof(uint32_t));
    *staging.get<uint32_t>() = 1;
    cts::DeviceMemory device(sizeof(uint32_t));
    uint32_t result = 0;
    cts::Stream stream;
    HAL_REQUIRE_OK(halLaunchHostFunc(
        stream,
        [](void* p) {
            std::this_thread::sleep_for(20ms);
            *static_cast<uint32_t*>(p) = 2;
        },
        staging.get()));
    HAL_REQUIRE_OK(halMemcpyAsync(device.get(), device.size(), staging.get(), sizeof(uint32_t),
                                  HAL_MEMCPY_HOST_TO_DEVICE, stream));
    HAL_REQUIRE_OK(halMemcpyAsync(&result, sizeof result, device.get(), sizeof(uint32_t),
                                  HAL_MEMCPY_DEVICE_TO_HOST, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(result == 2u);
}

TEST_CASE("host functions on many streams each run exactly once", "[host_func][concurrency]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    constexpr int kStreams = 8, kPerStream = 200;
    std::atomic<int> calls{0};
    std::vector<std::unique_ptr<cts::Stream>> streams;
    for (int s = 0; s < kStreams; ++s) streams.push_back(std::make_unique<cts::Stream>());
    for (int i = 0; i < kPerStream; ++i) {
        for (auto& stream : streams) {
            HAL_REQUIRE_OK(halLaunchHostFunc(
                *stream, [](void* p) { static_cast<std::atomic<int>*>(p)->fetch_add(1); }, &calls));
        }
    }
    HAL_REQUIRE_OK(halSynchronizeDevice());
    CHECK(calls.load() == kStreams * kPerStream);
}

TEST_CASE("host functions of different streams run concurrently where the device says so",
          "[host_func][concurrency]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_CONCURRENT_HOST_FUNCTIONS);
    // A's host function can only finish once B's host function has run.
    struct Handshake {
        std::atomic<bool> setByB{false};
        std::atomic<bool> aSawIt{false};
    } handshake;
    cts::Stream a, b;
    HAL_REQUIRE_OK(halLaunchHostFunc(
        a,
        [](void* p) {
            auto* h = static_cast<Handshake*>(p);
            h->aSawIt.store(cts::waitUntil([h] { return h->setByB.load(); }));
        },
        &handshake));
    HAL_REQUIRE_OK(halLaunchHostFunc(
        b, [](void* p) { static_cast<Handshake*>(p)->setByB.store(true); }, &handshake));
    HAL_REQUIRE_OK(halSynchronizeStream(b));
    HAL_REQUIRE_OK(halSynchronizeStream(a));
    CHECK(handshake.setByB.load());
    CHECK(handshake.aSawIt.load());
}

TEST_CASE("a host function may not call polyhal into the device", "[host_func][errors]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    struct Inside {
        void* block = nullptr;
        halStream other = nullptr;
        halEvent event = nullptr;
        halError free = HAL_SUCCESS, freeAsync = HAL_SUCCESS, malloc = HAL_SUCCESS,
                 record = HAL_SUCCESS, query = HAL_SUCCESS, copy = HAL_SUCCESS,
                 launch = HAL_SUCCESS;
        std::string freeMessage;
        halError getDevice = HAL_ERROR_UNKNOWN, properties = HAL_ERROR_UNKNOWN,
                 stats = HAL_ERROR_UNKNOWN;
    } inside;
    HAL_REQUIRE_OK(halMalloc(&inside.block, 4096));
    cts::Stream stream, other;
    cts::Event event;
    inside.other = other;
    inside.event = event;
    HAL_REQUIRE_OK(halLaunchHostFunc(
        stream,
        [](void* p) {
            auto* in = static_cast<Inside*>(p);
            in->free = halFree(in->block);
            in->freeMessage = halGetLastErrorMessage();
            in->freeAsync = halFreeAsync(in->block, in->other);
            void* fresh = nullptr;
            in->malloc = halMalloc(&fresh, 256);
            in->record = halRecordEvent(in->event, in->other);
            in->query = halQueryStream(in->other);
            uint32_t word = 0, copied = 0;
            in->copy = halMemcpy(&copied, sizeof copied, &word, sizeof word, HAL_MEMCPY_DEFAULT);
            in->launch = halLaunchHostFunc(
                in->other, [](void*) {}, nullptr);
            // What never reaches the device stays available.
            int device = -1;
            in->getDevice = halGetDevice(&device);
            halDeviceProperties props{};
            props.size = sizeof props;
            in->properties = halGetDeviceProperties(device, &props);
            halMemPoolStats stats{};
            stats.size = sizeof stats;
            in->stats = halMemPoolGetStats(device, &stats);
        },
        &inside));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(inside.free == HAL_ERROR_NOT_PERMITTED);
    CHECK(inside.freeMessage.find("halFree") != std::string::npos);
    CHECK(inside.freeMessage.find("host function") != std::string::npos);
    CHECK(inside.freeAsync == HAL_ERROR_NOT_PERMITTED);
    CHECK(inside.malloc == HAL_ERROR_NOT_PERMITTED);
    CHECK(inside.record == HAL_ERROR_NOT_PERMITTED);
    CHECK(inside.query == HAL_ERROR_NOT_PERMITTED);
    CHECK(inside.copy == HAL_ERROR_NOT_PERMITTED);
    CHECK(inside.launch == HAL_ERROR_NOT_PERMITTED);
    CHECK(inside.getDevice == HAL_SUCCESS);
    CHECK(inside.properties == HAL_SUCCESS);
    CHECK(inside.stats == HAL_SUCCESS);
    // The refused calls did nothing: the block is still live and the event never recorded.
    HAL_CHECK_OK(halFree(inside.block));
    float ms = 0.0f;
    if ((cts::deviceProperties().capabilities & HAL_DEVICE_CAP_TIMING_EVENTS) != 0) {
        CHECK(halEventElapsedTime(&ms, event, event) == HAL_ERROR_INVALID_VALUE);
    }
}
