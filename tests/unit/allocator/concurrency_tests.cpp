// Several host threads share one pool and its streams (run under ThreadSanitizer in CI): the
// pool must never hand the same memory to two live allocations.
#include "pool_harness.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

using namespace polyhal::allocator;
using namespace polyhal::allocator::testing;

namespace {

// Live allocations of all threads; an overlap means the pool handed out memory twice.
class LiveSet {
  public:
    bool insert(void* ptr, size_t size) {
        const uintptr_t begin = reinterpret_cast<uintptr_t>(ptr);
        std::lock_guard<std::mutex> lock(mutex_);
        auto next = live_.lower_bound(begin);
        if (next != live_.end() && next->first < begin + size) return false;
        if (next != live_.begin() && std::prev(next)->second > begin) return false;
        live_.emplace(begin, begin + size);
        return true;
    }
    void erase(void* ptr) {
        std::lock_guard<std::mutex> lock(mutex_);
        live_.erase(reinterpret_cast<uintptr_t>(ptr));
    }

  private:
    std::mutex mutex_;
    std::map<uintptr_t, uintptr_t> live_;
};

}  // namespace

TEST_CASE("threads allocating, using and freeing across shared streams", "[threads]") {
    constexpr int kThreads = 4;
    constexpr int kSteps = 3000;
    PoolHarness h(256 * kMiB);
    std::vector<TestStream> streams;
    std::vector<TestEvent*> events;
    for (int i = 0; i < kThreads; ++i) {
        streams.push_back(h.stream());
        events.push_back(&h.event());
    }
    LiveSet liveSet;
    std::atomic<int> overlaps{0};
    std::atomic<int> failures{0};

    auto worker = [&](int index) {
        std::mt19937 rng(static_cast<uint32_t>(index + 1));
        auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
        std::vector<std::pair<void*, size_t>> mine;
        for (int step = 0; step < kSteps; ++step) {
            TestStream stream = streams[pick(streams.size())];
            switch (pick(10)) {
            case 0:
            case 1:
            case 2: {
                const size_t size = pick(8) == 0 ? 1 * kMiB + pick(3 * kMiB) : 1 + pick(64 * kKiB);
                void* ptr = nullptr;
                const halError result = h.tryAllocate(size, stream, &ptr);
                if (result == HAL_ERROR_OUT_OF_MEMORY) break;
                if (result != HAL_SUCCESS) ++failures;
                if (!liveSet.insert(ptr, size)) ++overlaps;
                mine.push_back({ptr, size});
                break;
            }
            case 3:
            case 4:
                if (!mine.empty()) {
                    const size_t i = pick(mine.size());
                    liveSet.erase(mine[i].first);
                    if (h.free(mine[i].first, stream) != HAL_SUCCESS) ++failures;
                    mine[i] = mine.back();
                    mine.pop_back();
                }
                break;
            case 5:
                if (!mine.empty()) h.use(mine[pick(mine.size())].first, stream);
                break;
            case 6: h.record(*events[pick(events.size())], stream); break;
            case 7: h.wait(stream, *events[pick(events.size())]); break;
            case 8: h.query(*events[pick(events.size())]); break;
            default:
                if (pick(50) == 0) {
                    h.pool.trim(0);
                } else {
                    h.device.advance(stream.device, 1 + pick(4));
                }
                break;
            }
        }
        for (const auto& block : mine) {
            liveSet.erase(block.first);
            if (h.free(block.first, streams[0]) != HAL_SUCCESS) ++failures;
        }
    };

    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) threads.emplace_back(worker, i);
    for (std::thread& thread : threads) thread.join();

    CHECK(overlaps == 0);
    CHECK(failures == 0);
    h.synchronizeDevice();
    REQUIRE(h.pool.trim(0) == HAL_SUCCESS);
    const PoolStats stats = h.pool.stats();
    CHECK(stats.bytesInUse == 0);
    CHECK(stats.bytesReserved == 0);
    CHECK(h.device.counters().invalidFrees == 0);
}
