// Random programs against the fake device's own graph of operations: whenever the pool hands
// out memory, every earlier use of that memory must have finished or be ordered before the
// allocating stream's next operation.
#include "pool_harness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

using namespace polyhal::allocator;
using namespace polyhal::allocator::testing;

namespace {

struct LiveBlock {
    void* ptr;
    size_t size;
};

struct RecordedUse {
    uintptr_t begin;
    uintptr_t end;
    FakeDevice::OpId op;
};

class RandomProgram {
  public:
    RandomProgram(uint32_t seed, const PoolAttributes& attributes) : rng_(seed), h_(96 * kMiB) {
        h_.pool.setAttributes(attributes);
        for (int i = 0; i < 4; ++i) streams_.push_back(h_.stream());
        for (int i = 0; i < 6; ++i) events_.push_back(&h_.event());
    }

    void run(int steps) {
        for (int step = 0; step < steps; ++step) {
            switch (pick(20)) {
            case 0:
            case 1:
            case 2:
            case 3:
            case 4: allocate(); break;
            case 5:
            case 6:
            case 7: release(); break;
            case 8:
            case 9:
            case 10: use(); break;
            case 11: h_.record(*events_[pick(events_.size())], anyStream()); break;
            case 12: h_.wait(anyStream(), *events_[pick(events_.size())]); break;
            case 13: h_.query(*events_[pick(events_.size())]); break;
            case 14:
            case 15: h_.device.advance(anyStream().device, 1 + pick(3)); break;
            case 16: h_.work(anyStream()); break;
            case 17: rare(); break;
            default: h_.device.advance(anyStream().device, 1); break;
            }
            if (step % 128 == 0) forgetFinishedUses();
        }
        finish();
    }

  private:
    size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
    TestStream anyStream() { return streams_[pick(streams_.size())]; }

    size_t randomSize() {
        const size_t kind = pick(20);
        if (kind < 14) return 1 + pick(256 * kKiB);
        if (kind < 19) return 1 + pick(4 * kMiB);
        return 10 * kMiB + pick(4 * kMiB);
    }

    void allocate() {
        const TestStream stream = anyStream();
        const size_t size = randomSize();
        void* ptr = nullptr;
        const halError result = h_.tryAllocate(size, stream, &ptr);
        if (result == HAL_ERROR_OUT_OF_MEMORY) return;  // the fake device is small on purpose
        REQUIRE(result == HAL_SUCCESS);
        const uintptr_t begin = reinterpret_cast<uintptr_t>(ptr);
        const uintptr_t end = begin + size;
        for (const LiveBlock& live : live_) {
            const uintptr_t b = reinterpret_cast<uintptr_t>(live.ptr);
            REQUIRE((end <= b || b + live.size <= begin));
        }
        for (const RecordedUse& use : uses_) {
            if (use.end <= begin || end <= use.begin) continue;
            INFO("memory handed out while an earlier use neither finished nor is ordered");
            REQUIRE((h_.device.finished(use.op) || h_.device.orderedBefore(use.op, stream.device)));
        }
        live_.push_back({ptr, size});
    }

    void release() {
        if (live_.empty()) return;
        const size_t index = pick(live_.size());
        REQUIRE(h_.free(live_[index].ptr, anyStream()) == HAL_SUCCESS);
        live_[index] = live_.back();
        live_.pop_back();
    }

    void use() {
        if (live_.empty()) return;
        const LiveBlock& block = live_[pick(live_.size())];
        const uintptr_t begin = reinterpret_cast<uintptr_t>(block.ptr);
        // Sometimes through an interior pointer, as a kernel argument of a view would be.
        void* ptr = reinterpret_cast<void*>(begin + (pick(2) == 0 ? 0 : pick(block.size)));
        uses_.push_back({begin, begin + block.size, h_.use(ptr, anyStream())});
    }

    void rare() {
        switch (pick(4)) {
        case 0: h_.synchronize(anyStream()); break;
        case 1: REQUIRE(h_.pool.trim(pick(64) * kMiB) == HAL_SUCCESS); break;
        case 2: h_.synchronize(*events_[pick(events_.size())]); break;
        default: {
            const size_t index = pick(streams_.size());
            REQUIRE(h_.destroy(streams_[index]) == HAL_SUCCESS);
            streams_[index] = h_.stream();
            break;
        }
        }
    }

    void forgetFinishedUses() {
        uses_.erase(
            std::remove_if(uses_.begin(), uses_.end(),
                           [&](const RecordedUse& use) { return h_.device.finished(use.op); }),
            uses_.end());
    }

    void finish() {
        for (const LiveBlock& block : live_)
            REQUIRE(h_.free(block.ptr, anyStream()) == HAL_SUCCESS);
        h_.synchronizeDevice();
        h_.device.advanceAll();
        REQUIRE(h_.pool.trim(0) == HAL_SUCCESS);
        const PoolStats stats = h_.pool.stats();
        CHECK(stats.bytesInUse == 0);
        CHECK(stats.bytesReserved == 0);
        CHECK(h_.device.bytesAllocated() == 0);
        CHECK(h_.device.counters().invalidFrees == 0);
        CHECK(stats.reusedSameStream + stats.reusedProvenOrder + stats.reusedObservedComplete +
                  stats.newSegments + stats.oomSynchronized >
              0);
    }

    std::mt19937 rng_;
    PoolHarness h_;
    std::vector<TestStream> streams_;
    std::vector<TestEvent*> events_;
    std::vector<LiveBlock> live_;
    std::vector<RecordedUse> uses_;
};

}  // namespace

TEST_CASE("model check: no block is handed out while an earlier use may still run", "[model]") {
    const bool proven = GENERATE(true, false);
    const bool observed = GENERATE(true, false);
    const uint32_t seed = GENERATE(range(1u, 17u));
    PoolAttributes attributes;
    attributes.reuseProvenOrder = proven;
    attributes.reuseObservedCompletion = observed;
    if (seed % 2 == 0) attributes.releaseThreshold = 32 * kMiB;
    INFO("seed " << seed << ", proven " << proven << ", observed " << observed);
    RandomProgram(seed, attributes).run(3000);
}
