// Host-side cost of the stream-aware pool, measured over the in-process fake device so that
// only the pool's own work is timed (no device call is on these paths once warm).
//
//   polyhal_pool_bench --benchmark_filter=Pool
#include <fake_device.hpp>
#include <polyhal/allocator/device_pool.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

using polyhal::allocator::DevicePool;
using polyhal::allocator::PoolStats;
using polyhal::allocator::Stream;
using polyhal::allocator::VectorClock;
using polyhal::allocator::testing::FakeDevice;

namespace {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

struct Fixture {
    FakeDevice device;
    DevicePool pool{device};
    Stream* addStream() { return pool.addStream(device.createStream()); }
};

void* allocateOrAbort(DevicePool& pool, size_t size, Stream* stream) {
    void* ptr = nullptr;
    if (pool.allocate(size, stream, &ptr) != HAL_SUCCESS) std::abort();
    return ptr;
}

// Path 1: a block freed on a stream and allocated again by it.
void BM_PoolSameStreamPair(benchmark::State& state) {
    Fixture f;
    Stream* stream = f.addStream();
    const size_t size = static_cast<size_t>(state.range(0));
    f.pool.free(allocateOrAbort(f.pool, size, stream), stream);
    for (auto _ : state) {
        void* ptr = nullptr;
        f.pool.allocate(size, stream, &ptr);
        benchmark::DoNotOptimize(ptr);
        f.pool.free(ptr, stream);
    }
    state.counters["same_stream_reuses"] = static_cast<double>(f.pool.stats().reusedSameStream);
}
BENCHMARK(BM_PoolSameStreamPair)->Arg(4 * kKiB)->Arg(256 * kKiB)->Arg(4 * kMiB);

// Path 2: two streams hand blocks to each other through one event per round; every
// allocation reuses a block the other stream freed, proven by the event ordering alone. A
// round allocates a whole small segment's worth (at least 8 blocks), so no untouched memory is
// left that the allocating stream would take first.
void BM_PoolProvenOrderPair(benchmark::State& state) {
    Fixture f;
    Stream* streams[2] = {f.addStream(), f.addStream()};
    const size_t size = static_cast<size_t>(state.range(0));
    const size_t kBlocks = std::max<size_t>(8, 2 * kMiB / size);
    std::vector<void*> blocks(kBlocks);
    int turn = 0;
    auto round = [&]() {
        Stream* stream = streams[turn];
        for (void*& block : blocks) block = allocateOrAbort(f.pool, size, stream);
        f.pool.submitted(stream);  // one kernel on the stream uses the blocks
        for (void* block : blocks) f.pool.free(block, stream);
        VectorClock clock = f.pool.capture(stream);  // record an event after the frees ...
        turn ^= 1;
        f.pool.streamWaited(streams[turn], clock);  // ... and make the other stream wait on it
    };
    round();
    round();
    const PoolStats before = f.pool.stats();
    for (auto _ : state) round();
    const PoolStats after = f.pool.stats();
    const auto pairs = static_cast<int64_t>(state.iterations() * kBlocks);
    state.SetItemsProcessed(pairs);
    state.counters["ns_per_pair"] = benchmark::Counter(
        static_cast<double>(pairs), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["proven_share"] =
        static_cast<double>(after.reusedProvenOrder - before.reusedProvenOrder) /
        static_cast<double>(pairs);
}
BENCHMARK(BM_PoolProvenOrderPair)->Arg(4 * kKiB)->Arg(256 * kKiB);

// RMM's RANDOM_ALLOCATIONS: random sizes 1 KiB..4 MiB, each step allocates or frees at random
// with at most `maxLive` blocks live. Reports the fragmentation as peak reserved over the peak
// of bytes requested.
struct RandomSequence {
    struct Step {
        bool allocate;
        size_t size;   // allocate
        size_t index;  // free: which live block (modulo the live count)
    };
    std::vector<Step> steps;

    RandomSequence(size_t count, size_t maxLive, uint32_t seed) {
        std::mt19937_64 rng(seed);
        std::uniform_int_distribution<size_t> sizes(1 * kKiB, 4 * kMiB);
        size_t live = 0;
        for (size_t i = 0; i < count; ++i) {
            const bool allocate = live == 0 || (live < maxLive && (rng() & 1) != 0);
            steps.push_back({allocate, sizes(rng), static_cast<size_t>(rng())});
            live += allocate ? 1 : -1;
        }
    }
};

template <typename Allocate, typename Free>
size_t runSequence(const RandomSequence& sequence, Allocate allocate, Free free,
                   size_t* peakRequested) {
    std::vector<std::pair<void*, size_t>> live;
    size_t requested = 0;
    for (const RandomSequence::Step& step : sequence.steps) {
        if (step.allocate) {
            live.push_back({allocate(step.size), step.size});
            requested += step.size;
            *peakRequested = std::max(*peakRequested, requested);
        } else {
            const size_t i = step.index % live.size();
            free(live[i].first);
            requested -= live[i].second;
            live[i] = live.back();
            live.pop_back();
        }
    }
    for (const auto& block : live) free(block.first);
    return sequence.steps.size() + live.size();
}

void BM_PoolRandomAllocations(benchmark::State& state) {
    const RandomSequence sequence(20000, static_cast<size_t>(state.range(0)), 42);
    Fixture f;
    Stream* stream = f.addStream();
    size_t peakRequested = 0;
    size_t operations = 0;
    for (auto _ : state) {
        operations += runSequence(
            sequence, [&](size_t size) { return allocateOrAbort(f.pool, size, stream); },
            [&](void* ptr) { f.pool.free(ptr, stream); }, &peakRequested);
    }
    const PoolStats stats = f.pool.stats();
    state.SetItemsProcessed(static_cast<int64_t>(operations));
    state.counters["ns_per_op"] = benchmark::Counter(
        static_cast<double>(operations), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["peak_reserved_MiB"] = static_cast<double>(stats.peakBytesReserved) / kMiB;
    state.counters["peak_requested_MiB"] = static_cast<double>(peakRequested) / kMiB;
    state.counters["reserved_per_requested"] =
        static_cast<double>(stats.peakBytesReserved) / static_cast<double>(peakRequested);
}
BENCHMARK(BM_PoolRandomAllocations)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

// The same sequence straight to the backend (here the fake): reserved equals requested.
void BM_DirectRandomAllocations(benchmark::State& state) {
    const RandomSequence sequence(20000, static_cast<size_t>(state.range(0)), 42);
    FakeDevice device;
    size_t peakRequested = 0;
    size_t operations = 0;
    for (auto _ : state) {
        operations += runSequence(
            sequence,
            [&](size_t size) {
                void* ptr = nullptr;
                device.allocateMemory(size, &ptr);
                return ptr;
            },
            [&](void* ptr) { device.freeMemory(ptr); }, &peakRequested);
    }
    state.SetItemsProcessed(static_cast<int64_t>(operations));
    state.counters["ns_per_op"] = benchmark::Counter(
        static_cast<double>(operations), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["peak_requested_MiB"] = static_cast<double>(peakRequested) / kMiB;
}
BENCHMARK(BM_DirectRandomAllocations)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

// Cost of a free + allocate pair with many blocks live: must grow no faster than log n.
void BM_PoolScaling(benchmark::State& state) {
    const size_t live = static_cast<size_t>(state.range(0));
    Fixture f;
    Stream* stream = f.addStream();
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<size_t> sizes(512, 8 * kKiB);
    std::vector<void*> blocks(live);
    for (void*& block : blocks) block = allocateOrAbort(f.pool, sizes(rng), stream);
    constexpr size_t kPlan = 1 << 16;
    std::vector<size_t> victims(kPlan), newSizes(kPlan);
    for (size_t i = 0; i < kPlan; ++i) {
        victims[i] = static_cast<size_t>(rng() % live);
        newSizes[i] = sizes(rng);
    }
    size_t i = 0;
    for (auto _ : state) {
        void*& block = blocks[victims[i]];
        f.pool.free(block, stream);
        f.pool.allocate(newSizes[i], stream, &block);
        i = (i + 1) & (kPlan - 1);
    }
    state.counters["live_blocks"] = static_cast<double>(live);
}
BENCHMARK(BM_PoolScaling)->Arg(100)->Arg(10000)->Arg(1000000);

}  // namespace

BENCHMARK_MAIN();
