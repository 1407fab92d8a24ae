// The same-stream fast path: what a stream frees and takes back under its own cache lock must
// look to everyone else exactly as the pool's ordinary free and reuse would.
#include "pool_harness.hpp"
#include "stream.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace polyhal::allocator;
using namespace polyhal::allocator::testing;

TEST_CASE("a stream takes back the block it freed, and statistics see the free",
          "[same-stream]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    void* block = h.allocate(4 * kKiB, s0);
    h.use(block, s0);
    const PoolStats before = h.pool.stats();
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    PoolStats freed = h.pool.stats();
    CHECK(freed.bytesInUse == before.bytesInUse - 4 * kKiB);
    CHECK(freed.bytesCached == before.bytesCached + 4 * kKiB);
    Allocation allocation;
    CHECK_FALSE(h.pool.find(block, &allocation));
    ExportedBlock exported;
    CHECK_FALSE(h.pool.exportBlock(block, &exported));

    void* again = h.allocate(4000, s0);
    CHECK(again == block);
    const PoolStats reused = h.pool.stats();
    CHECK(reused.reusedSameStream == before.reusedSameStream + 1);
    CHECK(reused.bytesInUse == before.bytesInUse);
    REQUIRE(h.pool.find(block, &allocation));
    CHECK(allocation.size == 4000);
    CHECK(reused.newSegments == 1);
}

TEST_CASE("a parked block is refused as a double free and as an interior pointer",
          "[same-stream]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* block = h.allocate(8 * kKiB, s0);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    CHECK(h.free(block, s0) == HAL_ERROR_INVALID_VALUE);
    CHECK(h.device.lastErrorMessage().find("freed already") != std::string::npos);
    CHECK(h.free(block, s1) == HAL_ERROR_INVALID_VALUE);
    CHECK(h.device.lastErrorMessage().find("freed already") != std::string::npos);
    CHECK(h.free(static_cast<char*>(block) + 512, s0) == HAL_ERROR_INVALID_VALUE);
    CHECK(h.pool.stats().bytesInUse == 0);
}

TEST_CASE("a parked block reaches another stream ordered after its free", "[same-stream]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* block = h.allocate(1 * kMiB, s0);
    REQUIRE(h.allocate(1 * kMiB, s0) != nullptr);  // the rest of the small segment
    const FakeDevice::OpId write = h.use(block, s0);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    TestEvent& freed = h.event();
    h.record(freed, s0);

    // Not ordered yet: s1 gets new memory, never the block.
    CHECK(h.allocate(1 * kMiB, s1) != block);
    CHECK(h.allocate(1 * kMiB, s1) != block);
    h.wait(s1, freed);
    CHECK(h.allocate(1 * kMiB, s1) == block);
    CHECK(h.pool.stats().reusedProvenOrder == 1);
    CHECK_FALSE(h.device.finished(write));  // ordering sufficed, nothing waited
}

TEST_CASE("a parked block used late by another stream waits for that use", "[same-stream]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* block = h.allocate(64 * kKiB, s0);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    // The program uses the block after freeing it (or another thread's free won the race).
    const FakeDevice::OpId late = h.use(block, s1);

    void* next = h.allocate(64 * kKiB, s0);
    CHECK(next != block);
    CHECK(h.pool.stats().bytesPending == 64 * kKiB);
    h.device.advanceAll();
    REQUIRE(h.device.finished(late));
    h.synchronize(s1);
    CHECK(h.allocate(64 * kKiB, s0) == block);
}

TEST_CASE("a block another stream used while live goes through the pool when freed",
          "[same-stream]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* block = h.allocate(16 * kKiB, s0);
    const FakeDevice::OpId read = h.use(block, s1);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    CHECK(h.pool.stats().bytesPending == 16 * kKiB);
    void* next = h.allocate(16 * kKiB, s0);
    CHECK(next != block);
    CHECK_FALSE(h.device.finished(read));
}

TEST_CASE("a block freed on another stream keeps its home stream's uses, parked ones too",
          "[same-stream]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* block = h.allocate(1 * kMiB, s0);
    REQUIRE(h.allocate(1 * kMiB, s0) != nullptr);
    const FakeDevice::OpId first = h.use(block, s0);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);   // parked
    REQUIRE(h.allocate(1 * kMiB, s0) == block);  // taken back: no new use recorded
    REQUIRE(h.free(block, s1) == HAL_SUCCESS);   // freed by another stream

    // s1 is not ordered after s0's write to the block: it may not have it yet.
    CHECK(h.allocate(1 * kMiB, s1) != block);
    CHECK(h.allocate(1 * kMiB, s1) != block);
    CHECK_FALSE(h.device.finished(first));
    TestEvent& done = h.event();
    h.record(done, s0);
    h.wait(s1, done);
    CHECK(h.allocate(1 * kMiB, s1) == block);
}

TEST_CASE("parked memory is not lost: other sizes, trim, peak and stream removal see it",
          "[same-stream]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* a = h.allocate(512 * kKiB, s0);
    void* b = h.allocate(512 * kKiB, s0);
    void* rest = h.allocate(1 * kMiB, s0);
    REQUIRE(h.free(a, s0) == HAL_SUCCESS);
    REQUIRE(h.free(b, s0) == HAL_SUCCESS);
    // A request of another size merges the two parked halves instead of adding a segment.
    void* whole = h.allocate(1 * kMiB, s0);
    CHECK(whole == a);
    PoolStats stats = h.pool.stats();
    CHECK(stats.newSegments == 1);
    CHECK(stats.peakBytesInUse == 2 * kMiB);
    REQUIRE(h.free(whole, s0) == HAL_SUCCESS);
    REQUIRE(h.free(rest, s0) == HAL_SUCCESS);

    h.synchronize(s0);
    REQUIRE(h.pool.trim(0) == HAL_SUCCESS);
    stats = h.pool.stats();
    CHECK(stats.bytesReserved == 0);
    CHECK(stats.bytesInUse == 0);
    CHECK(stats.backendFrees == 1);

    void* c = h.allocate(4 * kKiB, s1);
    REQUIRE(h.free(c, s1) == HAL_SUCCESS);
    REQUIRE(h.destroy(s1) == HAL_SUCCESS);
    TestStream s2 = h.stream();
    REQUIRE(h.allocate(4 * kKiB, s2) != nullptr);
    stats = h.pool.stats();
    CHECK(stats.newSegments == 2);
    CHECK(stats.bytesInUse == 4 * kKiB);
}

TEST_CASE("threads on their own streams and on a shared one take blocks back safely",
          "[same-stream][threads]") {
    constexpr int kThreads = 4;
    constexpr int kRounds = 20000;
    PoolHarness h(256 * kMiB);
    TestStream shared = h.stream();
    std::vector<TestStream> own;
    for (int i = 0; i < kThreads; ++i) own.push_back(h.stream());
    std::atomic<int> failures{0};
    std::mutex liveMutex;
    std::set<void*> live;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            const TestStream stream = t % 2 == 0 ? own[t] : shared;
            const size_t size = (1 + t) * kKiB;
            for (int round = 0; round < kRounds; ++round) {
                void* ptr = nullptr;
                if (h.pool.allocate(size, stream.pool, &ptr) != HAL_SUCCESS) {
                    ++failures;
                    continue;
                }
                {
                    // Handed to no other thread while this one holds it.
                    std::lock_guard<std::mutex> lock(liveMutex);
                    if (!live.insert(ptr).second) ++failures;
                }
                {
                    std::lock_guard<std::mutex> lock(liveMutex);
                    live.erase(ptr);
                }
                if (h.pool.free(ptr, stream.pool) != HAL_SUCCESS) ++failures;
            }
        });
    }
    for (std::thread& thread : threads) thread.join();
    CHECK(failures.load() == 0);
    const PoolStats stats = h.pool.stats();
    CHECK(stats.bytesInUse == 0);
    CHECK(stats.reusedSameStream >= kThreads * (kRounds - 1) / 2);
}

TEST_CASE("a stream whose parked blocks keep going back unused stops parking for a while",
          "[same-stream]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    StreamCache& cache = s0.pool->cache;
    // Each round parks 4 KiB blocks that the next allocation (another size) gives back unused.
    size_t parked = 0;
    int rounds = 0;
    do {
        std::vector<void*> blocks;
        for (int i = 0; i < 20; ++i) blocks.push_back(h.allocate(4 * kKiB, s0));
        for (void* block : blocks) REQUIRE(h.free(block, s0) == HAL_SUCCESS);
        parked = cache.parkedBytes();
        if (rounds == 0) CHECK(parked > 0);
        void* other = h.allocate(8 * kKiB, s0);
        CHECK(cache.parkedBytes() == 0);
        REQUIRE(h.free(other, s0) == HAL_SUCCESS);
    } while (parked != 0 && ++rounds < 20);
    CHECK(parked == 0);
    // It tries again within 32 allocations.
    int allocations = 1;
    while (!cache.mayList() && allocations < 100) ++allocations;
    CHECK(allocations <= 32);
    const PoolStats stats = h.pool.stats();
    CHECK(stats.newSegments == 1);
}

// The pool skips streams that announced no park since its last pass: a stream must announce
// again after each pass, including one that found only a block it had taken back already.
TEST_CASE("every allocation that misses the fast path finds what was parked since the last",
          "[same-stream]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    StreamCache& cache0 = s0.pool->cache;
    StreamCache& cache1 = s1.pool->cache;
    for (int round = 0; round < 4; ++round) {
        INFO("round " << round);
        // s0 parks a block and takes it back: announced, nothing parked when s1 passes.
        void* a = h.allocate(4 * kKiB, s0);
        REQUIRE(h.free(a, s0) == HAL_SUCCESS);
        REQUIRE(h.allocate(4 * kKiB, s0) == a);
        void* passing = h.allocate(32 * kKiB, s1);
        void* b = h.allocate(8 * kKiB, s1);
        REQUIRE(passing != nullptr);
        REQUIRE(b != nullptr);
        // Parked again after those passes, and on s1 too: the next miss gives both back.
        REQUIRE(h.free(a, s0) == HAL_SUCCESS);
        REQUIRE(h.free(b, s1) == HAL_SUCCESS);
        REQUIRE(cache0.parkedBytes() == 4 * kKiB);
        REQUIRE(cache1.parkedBytes() == 8 * kKiB);
        void* other = h.allocate(16 * kKiB, s1);
        CHECK(cache0.parkedBytes() == 0);
        CHECK(cache1.parkedBytes() == 0);
        // The most ever in use: `passing` and `other`; a missed parked block would count.
        CHECK(h.pool.stats().peakBytesInUse == 48 * kKiB);
        REQUIRE(h.free(other, s1) == HAL_SUCCESS);
        REQUIRE(h.free(passing, s1) == HAL_SUCCESS);
    }
    CHECK(h.pool.stats().newSegments == 1);
}

TEST_CASE("parks racing with other streams' passes are all found by the next miss",
          "[same-stream][threads]") {
    constexpr int kParkers = 2;
    constexpr int kPasses = 200;
    PoolHarness h(256 * kMiB);
    TestStream passer = h.stream();
    std::vector<TestStream> parkers;
    for (int i = 0; i < kParkers; ++i) parkers.push_back(h.stream());
    std::atomic<int> failures{0};
    std::atomic<bool> stop{false};
    std::atomic<long> rounds{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kParkers; ++t) {
        threads.emplace_back([&, t] {
            while (!stop.load()) {
                void* ptr = nullptr;
                if (h.pool.allocate((1 + t) * kKiB, parkers[t].pool, &ptr) != HAL_SUCCESS ||
                    h.pool.free(ptr, parkers[t].pool) != HAL_SUCCESS) {
                    ++failures;
                }
                ++rounds;
            }
        });
    }
    // Large blocks (never parked, so this stream announces nothing itself) on another stream:
    // each allocation misses the fast path and looks over the parkers.
    for (int pass = 0; pass < kPasses; ++pass) {
        // Parkers parked since the last pass.
        const long seen = rounds.load();
        while (rounds.load() == seen) std::this_thread::yield();
        void* ptr = h.allocate(4 * kMiB, passer);
        if (ptr == nullptr || h.free(ptr, passer) != HAL_SUCCESS) ++failures;
    }
    stop = true;
    for (std::thread& thread : threads) thread.join();
    CHECK(failures.load() == 0);
    // Whatever the parkers parked last, whichever pass it raced with, the next miss finds it.
    void* last = h.allocate(4 * kMiB, passer);
    REQUIRE(last != nullptr);
    for (const TestStream& parker : parkers) CHECK(parker.pool->cache.parkedBytes() == 0);
    CHECK(h.pool.stats().bytesInUse == 4 * kMiB);
    REQUIRE(h.free(last, passer) == HAL_SUCCESS);
}
