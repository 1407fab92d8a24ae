// Concurrency stress of streams, events and the pool through the public API: threads create and
// destroy their own streams and events, share two streams and two events, and allocate, fill,
// read back, free, trim and synchronise at random. Every call must succeed (or be NOT_READY where
// that is an answer), and every block read back must hold what its owner wrote. Run under
// ThreadSanitizer (the tsan preset) it checks that every reuse of pool memory is ordered after
// the previous owner's work by a happens-before edge, not merely by timing.
//
// POLYHAL_STRESS_SECONDS (default 10) bounds the run; POLYHAL_STRESS_THREADS (default 4) sets the
// thread count; POLYHAL_STRESS_SEED replays a run (thread t uses seed + t).
#include <polyhal/hal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

long environmentNumber(const char* name, long fallback) {
    const char* text = std::getenv(name);
    return text != nullptr && *text != '\0' ? std::strtol(text, nullptr, 0) : fallback;
}

struct Shared {
    halStream streams[2] = {};
    halEvent events[2] = {};
    std::atomic<long> operations{0};
    std::mutex failuresMutex;
    std::vector<std::string> failures;

    void fail(int thread, const char* call, halError result) {
        std::lock_guard<std::mutex> lock(failuresMutex);
        failures.push_back("thread " + std::to_string(thread) + ": " + call + " -> " +
                           halGetErrorName(result) + " (" + halGetLastErrorMessage() + ")");
    }
};

void hostFunction(void*) {
    std::this_thread::sleep_for(std::chrono::microseconds(3));
}

#define STRESS_EXPECT(call, accepted)                     \
    do {                                                  \
        const halError result_ = (call);                  \
        if (!(accepted)) shared.fail(id, #call, result_); \
    } while (0)
#define STRESS_OK(call) STRESS_EXPECT(call, result_ == HAL_SUCCESS)

void worker(Shared& shared, int id, uint64_t seed, std::chrono::steady_clock::time_point end) {
    std::mt19937_64 random(seed + id);
    const auto pick = [&](uint64_t n) { return static_cast<size_t>(random() % n); };
    std::vector<unsigned char> host(8192);
    const auto pattern = static_cast<unsigned char>(0x40 + id);
    while (std::chrono::steady_clock::now() < end) {
        halStream mine = nullptr;
        halEvent event = nullptr;
        STRESS_OK(halCreateStream(&mine));
        STRESS_OK(halCreateEventWithFlag(&event, static_cast<uint32_t>(pick(4))));
        for (int step = 0; step < 20; ++step) {
            const halStream stream = pick(2) != 0 ? mine : shared.streams[pick(2)];
            const size_t size = 1 + pick(8000);
            void* block = nullptr;
            switch (pick(10)) {
            case 0:
                STRESS_OK(halMallocAsync(&block, size, stream));
                STRESS_OK(halMemsetAsync(block, size, pattern, size, stream));
                STRESS_OK(halMemcpyAsync(host.data(), host.size(), block, size, HAL_MEMCPY_DEFAULT,
                                         stream));
                STRESS_OK(halFreeAsync(block, stream));
                STRESS_OK(halSynchronizeStream(stream));
                for (size_t i = 0; i < size; ++i) {
                    if (host[i] != pattern) {
                        shared.fail(id, "contents read back", HAL_SUCCESS);
                        break;
                    }
                }
                break;
            case 1:
                STRESS_OK(halMalloc(&block, size));
                STRESS_OK(halMemsetAsync(block, size, 1, size, stream));
                STRESS_OK(halFree(block));
                break;
            case 2:
                STRESS_OK(halRecordEvent(event, stream));
                STRESS_OK(halStreamWaitEvent(mine, event));
                break;
            case 3: STRESS_OK(halRecordEvent(shared.events[pick(2)], stream)); break;
            case 4: STRESS_OK(halStreamWaitEvent(stream, shared.events[pick(2)])); break;
            case 5:
                STRESS_EXPECT(halQueryEvent(shared.events[pick(2)]),
                              result_ == HAL_SUCCESS || result_ == HAL_ERROR_NOT_READY);
                STRESS_EXPECT(halQueryStream(stream),
                              result_ == HAL_SUCCESS || result_ == HAL_ERROR_NOT_READY);
                break;
            case 6: STRESS_OK(halLaunchHostFunc(stream, hostFunction, nullptr)); break;
            case 7: STRESS_OK(halSynchronizeEvent(event)); break;
            case 8: STRESS_OK(halMemPoolTrim(0, pick(3) != 0 ? 1u << 20 : 0)); break;
            case 9: {
                halMemPoolStats stats = {};
                stats.size = sizeof stats;
                STRESS_OK(halMemPoolGetStats(0, &stats));
                float ms = 0;
                // Any answer is right here; the call races with records on purpose.
                (void)halEventElapsedTime(&ms, event, shared.events[0]);
                break;
            }
            }
            shared.operations.fetch_add(1, std::memory_order_relaxed);
        }
        if (pick(2) != 0) STRESS_OK(halSynchronizeStream(mine));
        STRESS_OK(halDestroyEvent(event));
        STRESS_OK(halDestroyStream(mine));
    }
}

}  // namespace

TEST_CASE("threads hammering streams, events and the pool get right results", "[stress]") {
    const long seconds = environmentNumber("POLYHAL_STRESS_SECONDS", 10);
    const int threads = static_cast<int>(environmentNumber("POLYHAL_STRESS_THREADS", 4));
    const auto seed = static_cast<uint64_t>(
        environmentNumber("POLYHAL_STRESS_SEED", static_cast<long>(std::random_device{}())));
    std::printf(
        "pool threads stress: %d threads x %ld s, seed %llu (POLYHAL_STRESS_SEED "
        "replays it)\n",
        threads, seconds, static_cast<unsigned long long>(seed));
    Shared shared;
    for (int i = 0; i < 2; ++i) {
        REQUIRE(halCreateStream(&shared.streams[i]) == HAL_SUCCESS);
        REQUIRE(halCreateEvent(&shared.events[i]) == HAL_SUCCESS);
    }
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    std::vector<std::thread> pool;
    for (int id = 0; id < threads; ++id) {
        pool.emplace_back(worker, std::ref(shared), id, seed, end);
    }
    for (std::thread& thread : pool) thread.join();
    CHECK(halSynchronizeDevice() == HAL_SUCCESS);
    for (int i = 0; i < 2; ++i) {
        CHECK(halDestroyEvent(shared.events[i]) == HAL_SUCCESS);
        CHECK(halDestroyStream(shared.streams[i]) == HAL_SUCCESS);
    }
    std::printf("pool threads stress: %ld operations, %zu failures\n", shared.operations.load(),
                shared.failures.size());
    for (size_t i = 0; i < shared.failures.size() && i < 20; ++i) {
        UNSCOPED_INFO(shared.failures[i]);
    }
    CHECK(shared.failures.empty());
}
