// Thread safety: many threads creating, using and destroying objects, and submitting to shared
// streams, at the same time.
#include <cstdint>
#include <thread>
#include <vector>

#include "cts.hpp"

namespace {

constexpr int kThreads = 8;

// Runs body(threadIndex) on kThreads threads started together; returns the number of threads
// whose body reported success.
template <typename Body>
int runConcurrently(Body body) {
    std::atomic<int> ready{0}, succeeded{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            ready.fetch_add(1);
            while (ready.load() < kThreads) std::this_thread::yield();
            if (body(t)) succeeded.fetch_add(1);
        });
    }
    for (auto& thread : threads) thread.join();
    return succeeded.load();
}

}  // namespace

TEST_CASE("threads create, use and destroy streams and events concurrently", "[threading]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    constexpr int kRounds = 50;
    std::atomic<int> calls{0};
    // Catch's assertions are not thread-safe: the threads only count, the test checks.
    const int succeeded = runConcurrently([&](int) {
        for (int round = 0; round < kRounds; ++round) {
            halStream stream = nullptr;
            halEvent event = nullptr;
            if (halCreateStream(&stream) != HAL_SUCCESS) return false;
            if (halCreateEvent(&event) != HAL_SUCCESS) return false;
            auto count = [](void* p) { static_cast<std::atomic<int>*>(p)->fetch_add(1); };
            if (halLaunchHostFunc(stream, count, &calls) != HAL_SUCCESS) return false;
            if (halRecordEvent(event, stream) != HAL_SUCCESS) return false;
            if (halStreamWaitEvent(nullptr, event) != HAL_SUCCESS) return false;
            if (halSynchronizeEvent(event) != HAL_SUCCESS) return false;
            if (halDestroyEvent(event) != HAL_SUCCESS) return false;
            if (halDestroyStream(stream) != HAL_SUCCESS) return false;
        }
        return true;
    });
    CHECK(succeeded == kThreads);
    HAL_REQUIRE_OK(halSynchronizeDevice());
    CHECK(calls.load() == kThreads * kRounds);
}

TEST_CASE("threads submitting to one stream keep their own order", "[threading][ordering]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    constexpr int kPerThread = 300;
    struct Record {
        int thread;
        int sequence;
    };
    struct Log {
        std::vector<Record> entries;  // appended only by the stream's host functions
    } log;
    struct Submission {
        Log* log;
        Record record;
    };
    std::vector<std::vector<Submission>> submissions(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        for (int i = 0; i < kPerThread; ++i) submissions[t].push_back({&log, {t, i}});
    }
    cts::Stream stream;
    const halStream shared = stream.get();
    const int succeeded = runConcurrently([&](int t) {
        for (auto& submission : submissions[t]) {
            const halError status = halLaunchHostFunc(
                shared,
                [](void* p) {
                    auto* s = static_cast<Submission*>(p);
                    s->log->entries.push_back(s->record);
                },
                &submission);
            if (status != HAL_SUCCESS) return false;
        }
        return true;
    });
    CHECK(succeeded == kThreads);
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    REQUIRE(log.entries.size() == size_t{kThreads * kPerThread});
    std::vector<int> next(kThreads, 0);
    for (const Record& record : log.entries) {
        REQUIRE(record.sequence == next[record.thread]);
        ++next[record.thread];
    }
}

TEST_CASE("threads allocate, copy and free concurrently", "[threading][memory]") {
    constexpr int kRounds = 40;
    constexpr size_t kSize = 16 * 1024;
    const int succeeded = runConcurrently([&](int t) {
        std::vector<uint8_t> source(kSize, static_cast<uint8_t>(t + 1)), result(kSize, 0);
        halStream stream = nullptr;
        if (halCreateStream(&stream) != HAL_SUCCESS) return false;
        bool ok = true;
        for (int round = 0; ok && round < kRounds; ++round) {
            void* device = nullptr;
            ok = halMalloc(&device, kSize) == HAL_SUCCESS &&
                 halMemcpyAsync(device, kSize, source.data(), kSize, HAL_MEMCPY_HOST_TO_DEVICE,
                                stream) == HAL_SUCCESS &&
                 halMemcpyAsync(result.data(), kSize, device, kSize, HAL_MEMCPY_DEVICE_TO_HOST,
                                stream) == HAL_SUCCESS &&
                 halSynchronizeStream(stream) == HAL_SUCCESS && result == source &&
                 halFree(device) == HAL_SUCCESS;
            std::fill(result.begin(), result.end(), 0);
        }
        return halDestroyStream(stream) == HAL_SUCCESS && ok;
    });
    CHECK(succeeded == kThreads);
}

TEST_CASE("a handle destroyed on one thread is invalid on another", "[threading][handles]") {
    halStream stream = nullptr;
    HAL_REQUIRE_OK(halCreateStream(&stream));
    HAL_REQUIRE_OK(halDestroyStream(stream));
    halError status = HAL_SUCCESS;
    std::thread([&] { status = halQueryStream(stream); }).join();
    CHECK(status == HAL_ERROR_INVALID_HANDLE);
}
