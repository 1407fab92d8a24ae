// The stream-aware pool through the public API, over the real CPU backend:
// - BM_ApiSameStreamPair: halMallocAsync + halFreeAsync of a block on one stream;
// - BM_ApiProvenOrderReuse: two streams hand blocks to each other, each allocation reusing a
//   block the other stream freed, proven reusable by an event ordering alone;
// - BM_ApiRandomAllocations / BM_DirectRandomAllocations: RMM's RANDOM_ALLOCATIONS through the
//   pool, and straight to the CPU backend's memAllocDevice/memFreeDevice (a second instance of
//   the backend, called without the core);
// - BM_ApiPipeline: four streams passing buffers along through events, with reuse by proven
//   order on and off;
// - BM_ApiScaling: a free + allocate pair with 1e2, 1e4 and 1e6 blocks live;
// - BM_ApiThreads: 1, 2 and 4 threads allocating and freeing, each on its own stream or all on
//   one.
//
//   polyhal_pool_api_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// The per-operation counters (ns_per_pair, ns_per_op) use the benchmark thread's CPU time: the
// host's cost of the calls. The pipeline includes device work and is timed on the wall clock.
// POLYHAL_BACKEND defaults to cpu here; any other backend is refused, since the direct
// comparison calls the CPU backend.
#include <benchmark/benchmark.h>
#include <polyhal/hal.h>
#include <polyhal/plugin.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "cpu_backend.h"

namespace {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kGranule = 512;  // the pool counts block sizes in these units

void check(halError status, const char* what) {
    if (status != HAL_SUCCESS) {
        std::fprintf(stderr, "%s: %s: %s\n", what, halGetErrorName(status),
                     halGetLastErrorMessage());
        std::abort();
    }
}

halMemPoolStats poolStats() {
    halMemPoolStats stats;
    std::memset(&stats, 0, sizeof stats);
    stats.size = sizeof stats;
    check(halMemPoolGetStats(0, &stats), "halMemPoolGetStats");
    return stats;
}

// Starts a benchmark from an empty cache, so that what it reserves is its own.
void emptyPool() {
    check(halSynchronizeDevice(), "halSynchronizeDevice");
    check(halMemPoolTrim(0, 0), "halMemPoolTrim");
}

void* allocate(size_t size, halStream stream) {
    void* ptr = nullptr;
    check(halMallocAsync(&ptr, size, stream), "halMallocAsync");
    return ptr;
}

// A counter reported as nanoseconds per `count` items of the whole run.
benchmark::Counter nanosecondsPer(double count) {
    return benchmark::Counter(count, benchmark::Counter::kIsRate | benchmark::Counter::kInvert,
                              benchmark::Counter::OneK::kIs1000);
}

class Stream {
  public:
    Stream() { check(halCreateStream(&stream_), "halCreateStream"); }
    ~Stream() { halDestroyStream(stream_); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    operator halStream() const { return stream_; }

  private:
    halStream stream_ = nullptr;
};

class Event {
  public:
    Event() { check(halCreateEventWithFlag(&event_, HAL_EVENT_DISABLE_TIMING), "halCreateEvent"); }
    ~Event() { halDestroyEvent(event_); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    operator halEvent() const { return event_; }

  private:
    halEvent event_ = nullptr;
};

// ---- (a) Same stream ------------------------------------------------------------------------

// A block freed on a stream and allocated again by it: reuse path 1, no device call.
void BM_ApiSameStreamPair(benchmark::State& state) {
    const size_t size = static_cast<size_t>(state.range(0));
    emptyPool();
    Stream stream;
    check(halFreeAsync(allocate(size, stream), stream), "halFreeAsync");
    const halMemPoolStats before = poolStats();
    for (auto _ : state) {
        void* ptr = nullptr;
        halMallocAsync(&ptr, size, stream);
        benchmark::DoNotOptimize(ptr);
        halFreeAsync(ptr, stream);
    }
    const halMemPoolStats after = poolStats();
    state.counters["same_stream_share"] =
        static_cast<double>(after.reusedSameStream - before.reusedSameStream) /
        static_cast<double>(state.iterations());
}
BENCHMARK(BM_ApiSameStreamPair)->Arg(4 * kKiB)->Arg(256 * kKiB)->Arg(4 * kMiB);

// The reference for the pair above: glibc's malloc + free of the same size, in the same run.
void BM_HostMallocFreePair(benchmark::State& state) {
    const size_t size = static_cast<size_t>(state.range(0));
    for (auto _ : state) {
        void* ptr = std::malloc(size);
        benchmark::DoNotOptimize(ptr);
        std::free(ptr);
    }
}
BENCHMARK(BM_HostMallocFreePair)->Arg(4 * kKiB)->Arg(256 * kKiB);

// ---- (b) Proven order across streams --------------------------------------------------------

// Two streams take turns. A turn allocates a batch of blocks on its stream, enqueues one 1-byte
// memset (the work that uses them), frees them on the same stream, records an event there, and
// makes the other stream wait on it: the other stream's next turn reuses exactly these blocks,
// proven ordered by the event. A batch spans at least one whole 2 MiB small segment, so no
// untouched memory is left that a stream would take first. ns_per_pair is one halMallocAsync
// + halFreeAsync pair plus its share of the turn's halMemsetAsync, halRecordEvent and
// halStreamWaitEvent; every 256 turns the host synchronises once (also included).
void BM_ApiProvenOrderReuse(benchmark::State& state) {
    const size_t size = static_cast<size_t>(state.range(0));
    const size_t batch = std::max<size_t>(8, 2 * kMiB / size);
    emptyPool();
    Stream streams[2];
    Event handOver;
    std::vector<void*> blocks(batch);
    int turn = 0;
    uint64_t turns = 0;
    auto takeTurn = [&] {
        const halStream stream = streams[turn];
        for (void*& block : blocks) halMallocAsync(&block, size, stream);
        halMemsetAsync(blocks[0], size, 0, 1, stream);
        for (void* block : blocks) halFreeAsync(block, stream);
        halRecordEvent(handOver, stream);
        turn ^= 1;
        halStreamWaitEvent(streams[turn], handOver);
        if (++turns % 256 == 0) halSynchronizeStream(streams[turn]);
    };
    takeTurn();
    takeTurn();
    const halMemPoolStats before = poolStats();
    for (auto _ : state) takeTurn();
    const halMemPoolStats after = poolStats();
    check(halSynchronizeDevice(), "halSynchronizeDevice");
    const double pairs = static_cast<double>(state.iterations()) * static_cast<double>(batch);
    state.SetItemsProcessed(static_cast<int64_t>(pairs));
    state.counters["ns_per_pair"] = nanosecondsPer(pairs);
    state.counters["proven_share"] =
        static_cast<double>(after.reusedProvenOrder - before.reusedProvenOrder) / pairs;
}
BENCHMARK(BM_ApiProvenOrderReuse)->Arg(4 * kKiB)->Arg(256 * kKiB);

// ---- (c) RMM's RANDOM_ALLOCATIONS -----------------------------------------------------------

// A fixed random program: each step allocates (random size 1 KiB..4 MiB) or frees a random
// live block, with at most `maxLive` blocks live.
struct RandomProgram {
    struct Step {
        bool allocate;
        size_t size;    // allocate
        size_t victim;  // free: which live block, modulo the live count
    };
    std::vector<Step> steps;

    RandomProgram(size_t count, size_t maxLive, uint64_t seed) {
        std::mt19937_64 random(seed);
        std::uniform_int_distribution<size_t> sizes(1 * kKiB, 4 * kMiB);
        size_t live = 0;
        for (size_t i = 0; i < count; ++i) {
            const bool allocate = live == 0 || (live < maxLive && (random() & 1) != 0);
            steps.push_back({allocate, sizes(random), static_cast<size_t>(random())});
            live += allocate ? 1 : -1;
        }
    }

    // Runs the program, then frees what is left; calls afterStep() after every step. Returns
    // the number of allocations and frees.
    template <typename Allocate, typename Free, typename AfterStep>
    size_t run(Allocate allocate, Free free, AfterStep afterStep) const {
        std::vector<void*> live;
        for (const Step& step : steps) {
            if (step.allocate) {
                live.push_back(allocate(step.size));
            } else {
                const size_t i = step.victim % live.size();
                free(live[i]);
                live[i] = live.back();
                live.pop_back();
            }
            afterStep(step);
        }
        for (void* block : live) free(block);
        return steps.size() + live.size();
    }

    // The most bytes live at once, each block rounded up to the pool's granule.
    uint64_t peakLiveBytes() const {
        std::vector<uint64_t> live;
        uint64_t bytes = 0, peak = 0;
        for (const Step& step : steps) {
            if (step.allocate) {
                live.push_back((step.size + kGranule - 1) / kGranule * kGranule);
                bytes += live.back();
                peak = std::max(peak, bytes);
            } else {
                const size_t i = step.victim % live.size();
                bytes -= live[i];
                live[i] = live.back();
                live.pop_back();
            }
        }
        return peak;
    }
};

constexpr size_t kRandomSteps = 20000;
constexpr uint64_t kRandomSeed = 42;

// Peaks in bytes: reserved from the device, in use (block sizes: a large block keeps a sliver
// it was not split from), and requested (rounded to the granule), over one run of `program`.
void reportRandom(benchmark::State& state, const RandomProgram& program, size_t operations,
                  double peakReserved, double peakInUse) {
    const double peakRequested = static_cast<double>(program.peakLiveBytes());
    state.SetItemsProcessed(static_cast<int64_t>(operations));
    state.counters["ns_per_op"] = nanosecondsPer(static_cast<double>(operations));
    state.counters["peak_reserved_MiB"] = peakReserved / kMiB;
    state.counters["peak_in_use_MiB"] = peakInUse / kMiB;
    state.counters["peak_requested_MiB"] = peakRequested / kMiB;
    state.counters["reserved_per_in_use"] = peakReserved / peakInUse;
    state.counters["reserved_per_requested"] = peakReserved / peakRequested;
}

// Through the pool on one stream. The peaks come from halMemPoolGetStats, read after every step
// of one untimed run from an empty cache; the timed runs then find the cache warm, as RMM's
// repeated runs do.
void BM_ApiRandomAllocations(benchmark::State& state) {
    const RandomProgram program(kRandomSteps, static_cast<size_t>(state.range(0)), kRandomSeed);
    emptyPool();
    Stream stream;
    const uint64_t inUseBefore = poolStats().bytesInUse;
    const uint64_t reservedBefore = poolStats().bytesReserved;
    auto allocateOn = [&](size_t size) { return allocate(size, stream); };
    auto freeOn = [&](void* ptr) { halFreeAsync(ptr, stream); };
    uint64_t peakReserved = 0, peakInUse = 0;
    program.run(allocateOn, freeOn, [&](const RandomProgram::Step&) {
        const halMemPoolStats stats = poolStats();
        peakReserved = std::max(peakReserved, stats.bytesReserved - reservedBefore);
        peakInUse = std::max(peakInUse, stats.bytesInUse - inUseBefore);
    });
    size_t operations = 0;
    for (auto _ : state) operations += program.run(allocateOn, freeOn, [](const auto&) {});
    reportRandom(state, program, operations, static_cast<double>(peakReserved),
                 static_cast<double>(peakInUse));
}
BENCHMARK(BM_ApiRandomAllocations)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

// A second instance of the CPU backend, called without the core in between.
class DirectCpuDevice {
  public:
    DirectCpuDevice() {
        static const halPluginHost host = {sizeof(halPluginHost), HAL_PLUGIN_ABI_VERSION,
                                           [](halLogLevel, const char*) {},
                                           [](halLogLevel) { return 0; }, [](const char*) {}};
        table_.size = sizeof table_;
        check(polyhalCpuGetDispatchTable(HAL_PLUGIN_ABI_VERSION, &host, &table_), "entry");
        check(table_.initialize(), "initialize");
        check(table_.deviceOpen(0, &device_), "deviceOpen");
    }
    void* allocate(size_t size) {
        void* ptr = nullptr;
        check(table_.memAllocDevice(device_, size, &ptr), "memAllocDevice");
        return ptr;
    }
    void free(void* ptr) { check(table_.memFreeDevice(device_, ptr), "memFreeDevice"); }

  private:
    halPluginDispatchTable table_{};
    halPluginDevice device_ = nullptr;
};

DirectCpuDevice& directCpuDevice() {
    static DirectCpuDevice* device = new DirectCpuDevice();
    return *device;
}

// The same program straight to the backend: every block is its own backend allocation, so
// reserved equals in use equals requested (counted in the pool's 512-byte granules).
void BM_DirectRandomAllocations(benchmark::State& state) {
    const RandomProgram program(kRandomSteps, static_cast<size_t>(state.range(0)), kRandomSeed);
    DirectCpuDevice& device = directCpuDevice();
    size_t operations = 0;
    for (auto _ : state) {
        operations += program.run([&](size_t size) { return device.allocate(size); },
                                  [&](void* ptr) { device.free(ptr); }, [](const auto&) {});
    }
    const double peak = static_cast<double>(program.peakLiveBytes());
    reportRandom(state, program, operations, peak, peak);
}
BENCHMARK(BM_DirectRandomAllocations)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

// ---- (d) Multi-stream pipeline ---------------------------------------------------------------

// Four streams pass each item along: stage 0 allocates a buffer on s0 and writes it; stage i
// (1..3) waits for stage i-1's event, allocates its own buffer on s_i, copies the previous
// buffer into it, frees the previous buffer on s_i and records its event; stage 3 also frees
// its own buffer, and s0 waits for it before the next item, closing the ring. With reuse by
// proven order a stage takes the buffer it freed for the previous item back at once; without
// it, only once the pool has seen that item's earlier stage finish. The host synchronises every
// 64 items (included), so the queues stay bounded; items/s counts items through all 4 stages.
void BM_ApiPipeline(benchmark::State& state) {
    const size_t size = static_cast<size_t>(state.range(0));
    const bool provenOrder = state.range(1) != 0;
    constexpr int kStages = 4;
    constexpr uint64_t kItemsPerSync = 64;
    emptyPool();
    check(halMemPoolSetAttribute(0, HAL_MEMPOOL_ATTR_REUSE_PROVEN_ORDER, provenOrder ? 1 : 0),
          "halMemPoolSetAttribute");
    Stream streams[kStages];
    Event stageDone[kStages];
    uint64_t items = 0;
    auto passItem = [&] {
        halStreamWaitEvent(streams[0], stageDone[kStages - 1]);
        void* buffer = allocate(size, streams[0]);
        halMemsetAsync(buffer, size, static_cast<int>(items & 0xFF), size, streams[0]);
        halRecordEvent(stageDone[0], streams[0]);
        for (int stage = 1; stage < kStages; ++stage) {
            const halStream stream = streams[stage];
            halStreamWaitEvent(stream, stageDone[stage - 1]);
            void* next = allocate(size, stream);
            halMemcpyAsync(next, size, buffer, size, HAL_MEMCPY_DEVICE_TO_DEVICE, stream);
            halFreeAsync(buffer, stream);
            buffer = next;
            if (stage == kStages - 1) halFreeAsync(buffer, stream);
            halRecordEvent(stageDone[stage], stream);
        }
        if (++items % kItemsPerSync == 0) halSynchronizeStream(streams[kStages - 1]);
    };
    // The ring's first item waits for a last stage that has not run: recorded once, empty.
    check(halRecordEvent(stageDone[kStages - 1], streams[kStages - 1]), "halRecordEvent");
    for (int warmUp = 0; warmUp < 8; ++warmUp) passItem();
    const halMemPoolStats before = poolStats();
    for (auto _ : state) passItem();
    check(halSynchronizeDevice(), "halSynchronizeDevice");
    const halMemPoolStats after = poolStats();
    check(halMemPoolSetAttribute(0, HAL_MEMPOOL_ATTR_REUSE_PROVEN_ORDER, 1),
          "halMemPoolSetAttribute");
    const double allocations = static_cast<double>(state.iterations()) * kStages;
    state.SetItemsProcessed(state.iterations());
    state.counters["proven_share"] =
        static_cast<double>(after.reusedProvenOrder - before.reusedProvenOrder) / allocations;
    state.counters["observed_share"] =
        static_cast<double>(after.reusedObservedComplete - before.reusedObservedComplete) /
        allocations;
    state.counters["same_stream_share"] =
        static_cast<double>(after.reusedSameStream - before.reusedSameStream) / allocations;
    state.counters["new_segments"] = static_cast<double>(after.newSegments - before.newSegments);
    state.counters["reserved_MiB"] = static_cast<double>(after.bytesReserved) / kMiB;
}
BENCHMARK(BM_ApiPipeline)
    ->ArgNames({"bytes", "proven_order"})
    ->Args({64 * kKiB, 1})
    ->Args({64 * kKiB, 0})
    ->UseRealTime();

// ---- (e) Scaling with the number of live blocks ---------------------------------------------

// One iteration frees a random live block and allocates a block of a random size in its place,
// on one stream, with `live` blocks of 512 B .. 2 KiB live: must grow no faster than log n.
void BM_ApiScaling(benchmark::State& state) {
    const size_t live = static_cast<size_t>(state.range(0));
    emptyPool();
    Stream stream;
    std::mt19937_64 random(7);
    std::uniform_int_distribution<size_t> sizes(kGranule, 4 * kGranule);
    std::vector<void*> blocks(live);
    for (void*& block : blocks) block = allocate(sizes(random), stream);
    constexpr size_t kPlan = size_t{1} << 16;
    std::vector<size_t> victims(kPlan), newSizes(kPlan);
    for (size_t i = 0; i < kPlan; ++i) {
        victims[i] = static_cast<size_t>(random() % live);
        newSizes[i] = sizes(random);
    }
    size_t i = 0;
    for (auto _ : state) {
        void*& block = blocks[victims[i]];
        halFreeAsync(block, stream);
        halMallocAsync(&block, newSizes[i], stream);
        i = (i + 1) & (kPlan - 1);
    }
    for (void* block : blocks) halFreeAsync(block, stream);
    check(halSynchronizeStream(stream), "halSynchronizeStream");
    state.counters["live_blocks"] = static_cast<double>(live);
}
BENCHMARK(BM_ApiScaling)->Arg(100)->Arg(10000)->Arg(1000000);

// ---- (f) Threads -------------------------------------------------------------------------------

// Each thread allocates and frees 4 KiB blocks on a stream of its own (`own_stream`), or all
// threads on one stream shared by them: how the same-stream path scales with threads. Threads on
// streams of their own share no lock (each stream's cache has its own); threads sharing a stream
// share its cache lock.
halStream g_sharedStream = nullptr;

void BM_ApiThreads(benchmark::State& state) {
    const bool ownStream = state.range(0) != 0;
    if (state.thread_index() == 0) {
        emptyPool();
        check(halCreateStream(&g_sharedStream), "halCreateStream");
    }
    Stream own;  // created by every thread, used where ownStream
    // Google Benchmark starts the timed loops of all threads together, after this setup.
    for (auto _ : state) {
        const halStream stream = ownStream ? static_cast<halStream>(own) : g_sharedStream;
        void* ptr = nullptr;
        halMallocAsync(&ptr, 4 * kKiB, stream);
        benchmark::DoNotOptimize(ptr);
        halFreeAsync(ptr, stream);
    }
    // Pairs per second of wall time, summed over the threads: flat means no scaling.
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
    if (state.thread_index() == 0) {  // every thread's loop has ended
        check(halDestroyStream(g_sharedStream), "halDestroyStream");
        check(halSynchronizeDevice(), "halSynchronizeDevice");
    }
}
BENCHMARK(BM_ApiThreads)
    ->ArgName("own_stream")
    ->Arg(1)
    ->Arg(0)
    ->Threads(1)
    ->Threads(2)
    ->Threads(4)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
    setenv("POLYHAL_BACKEND", "cpu", /*overwrite=*/0);
    check(halInit(), "halInit");
    const char* backend = nullptr;
    check(halGetBackendName(&backend), "halGetBackendName");
    if (std::strcmp(backend, "cpu") != 0) {
        std::fprintf(stderr,
                     "polyhal_pool_api_bench measures the CPU backend; POLYHAL_BACKEND "
                     "selects '%s'\n",
                     backend);
        return 1;
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
