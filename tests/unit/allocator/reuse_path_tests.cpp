// The reuse order 1..4 and its statistics, on the scenarios that motivate the pool.
#include "pool_harness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

using namespace polyhal::allocator;
using namespace polyhal::allocator::testing;

namespace {

// A request of 12 MiB gets a segment of exactly 12 MiB: no untouched remainder that another
// stream could take instead, so the only candidate is the block under test.
constexpr size_t kWholeSegment = 12 * kMiB;

bool overlaps(const void* a, const void* b, size_t size) {
    const auto x = reinterpret_cast<uintptr_t>(a);
    const auto y = reinterpret_cast<uintptr_t>(b);
    return x < y + size && y < x + size;
}

}  // namespace

TEST_CASE("a block freed on a stream is reused by that stream at once", "[reuse]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    void* first = h.allocate(4 * kKiB, s0);
    REQUIRE(first != nullptr);
    h.use(first, s0);
    REQUIRE(h.free(first, s0) == HAL_SUCCESS);

    void* second = h.allocate(4 * kKiB, s0);
    CHECK(second == first);
    const PoolStats stats = h.pool.stats();
    CHECK(stats.newSegments == 1);
    CHECK(stats.reusedSameStream == 1);
    CHECK(stats.backendAllocations == 1);
    // Stream order alone protects the block: no event, query or synchronisation.
    const FakeDevice::Counters device = h.device.counters();
    CHECK(device.eventRecords == 0);
    CHECK(device.eventQueries == 0);
    CHECK(device.eventSynchronizations == 0);
}

TEST_CASE(
    "MindSpore: a block read by a long operation on stream 1 is not given to new work "
    "on stream 0, and flows back once stream 0 waits for stream 1",
    "[reuse][mindspore]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();

    void* addS0 = h.allocate(64 * kKiB, s0);
    h.use(addS0, s0);  // add_s0 = input_s0 + 1
    TestEvent& inputReady = h.event();
    h.record(inputReady, s0);
    h.wait(s1, inputReady);                          // s1.wait_stream(default_stream)
    const FakeDevice::OpId conv = h.use(addS0, s1);  // conv2d(add_s0, weight): long
    h.use(addS0, s1);                                // add_s1 = add_s0 + 1
    TestEvent& ev = h.event();
    h.record(ev, s1);
    REQUIRE(h.free(addS0, s0) == HAL_SUCCESS);  // del add_s0

    void* mess = h.allocate(64 * kKiB, s0);  // mess_output = mess_input + 1
    REQUIRE(mess != nullptr);
    CHECK_FALSE(overlaps(mess, addS0, 64 * kKiB));
    CHECK_FALSE(h.device.finished(conv));
    CHECK(h.pool.stats().bytesPending == 64 * kKiB);

    h.wait(s0, ev);  // ev.wait(): stream 0 now runs after everything stream 1 did with it
    void* again = h.allocate(64 * kKiB, s0);
    CHECK(again == addS0);
    CHECK(h.pool.stats().reusedProvenOrder == 1);
    CHECK(h.pool.stats().bytesPending == 0);
    CHECK_FALSE(h.device.finished(conv));  // reused while stream 1 still runs: ordering suffices
    CHECK(h.device.counters().eventSynchronizations == 0);
}

TEST_CASE(
    "flow back: an event recorded after the last foreign use and waited on by the "
    "owner returns the block to the owner without host synchronisation",
    "[reuse][flow-back]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* block = h.allocate(kWholeSegment, s0);
    h.use(block, s0);
    h.use(block, s1);
    TestEvent& done = h.event();
    h.record(done, s1);
    h.wait(s0, done);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);

    void* again = h.allocate(kWholeSegment, s0);
    CHECK(again == block);
    const PoolStats stats = h.pool.stats();
    CHECK(stats.reusedProvenOrder == 1);
    CHECK(stats.newSegments == 1);
    const FakeDevice::Counters device = h.device.counters();
    CHECK(device.eventQueries == 0);
    CHECK(device.eventSynchronizations == 0);
    CHECK(device.streamSynchronizations == 0);
}

TEST_CASE("flow back also works when the owner waits after the free", "[reuse][flow-back]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* block = h.allocate(kWholeSegment, s0);
    h.use(block, s1);
    TestEvent& done = h.event();
    h.record(done, s1);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    CHECK(h.pool.stats().bytesPending == kWholeSegment);

    h.wait(s0, done);
    CHECK(h.allocate(kWholeSegment, s0) == block);
    CHECK(h.pool.stats().reusedProvenOrder == 1);
    CHECK(h.device.counters().eventSynchronizations == 0);
}

TEST_CASE("a block freed on one stream is reused by another ordered after the free",
          "[reuse][proven]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* block = h.allocate(kWholeSegment, s1);
    h.use(block, s1);
    REQUIRE(h.free(block, s1) == HAL_SUCCESS);

    SECTION("an event recorded after the free orders it") {
        TestEvent& freed = h.event();
        h.record(freed, s1);
        h.wait(s0, freed);
        CHECK(h.allocate(kWholeSegment, s0) == block);
        CHECK(h.pool.stats().reusedProvenOrder == 1);
    }
    SECTION("an event recorded before the last use does not") {
        TestEvent& early = h.event();
        void* other = h.allocate(kWholeSegment, s1);
        REQUIRE(other == block);
        h.record(early, s1);
        h.use(other, s1);
        REQUIRE(h.free(other, s1) == HAL_SUCCESS);
        h.wait(s0, early);
        void* fresh = h.allocate(kWholeSegment, s0);
        CHECK(fresh != block);
        CHECK(h.pool.stats().reusedProvenOrder == 0);
    }
}

TEST_CASE(
    "the pool's copy of a stream's clock serves that stream only, and only until the stream "
    "waits again",
    "[reuse][proven]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    TestStream s2 = h.stream();
    void* a = h.allocate(kWholeSegment, s1);
    void* b = h.allocate(kWholeSegment, s1);
    h.use(a, s1);
    h.use(b, s1);
    REQUIRE(h.free(a, s1) == HAL_SUCCESS);
    REQUIRE(h.free(b, s1) == HAL_SUCCESS);
    TestEvent& freed = h.event();
    h.record(freed, s1);
    auto isFreed = [&](void* ptr) { return ptr == a || ptr == b; };

    // s0 copies its clock (s1 has ready blocks, none of them ordered before s0) and allocates
    // again with the copy unchanged.
    REQUIRE(h.allocate(4 * kKiB, s0) != nullptr);
    CHECK_FALSE(isFreed(h.allocate(kWholeSegment, s0)));
    // s2's copy, which proves both frees, must not serve s0.
    h.wait(s2, freed);
    REQUIRE(h.allocate(4 * kKiB, s2) != nullptr);
    CHECK_FALSE(isFreed(h.allocate(kWholeSegment, s0)));
    CHECK(h.pool.stats().reusedProvenOrder == 0);
    // s0's wait changes its clock: the copy is taken again and proves the free.
    h.wait(s0, freed);
    CHECK(isFreed(h.allocate(kWholeSegment, s0)));
    CHECK(h.pool.stats().reusedProvenOrder == 1);
    CHECK(isFreed(h.allocate(kWholeSegment, s2)));
    CHECK(h.pool.stats().reusedProvenOrder == 2);
}

TEST_CASE("chains: s1 -> s2 -> s0 through two events prove the reuse", "[reuse][chain]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    TestStream s2 = h.stream();
    void* block = h.allocate(kWholeSegment, s0);
    h.use(block, s0);
    TestEvent& e0 = h.event();
    h.record(e0, s0);
    h.wait(s1, e0);
    h.use(block, s1);
    TestEvent& e1 = h.event();
    h.record(e1, s1);
    h.wait(s2, e1);
    h.work(s2);
    TestEvent& e2 = h.event();
    h.record(e2, s2);

    SECTION("with the second link") {
        h.wait(s0, e2);
        REQUIRE(h.free(block, s0) == HAL_SUCCESS);
        CHECK(h.allocate(kWholeSegment, s0) == block);
        CHECK(h.pool.stats().reusedProvenOrder == 1);
    }
    SECTION("without it the block is held") {
        REQUIRE(h.free(block, s0) == HAL_SUCCESS);
        CHECK(h.allocate(kWholeSegment, s0) != block);
        CHECK(h.pool.stats().reusedProvenOrder == 0);
    }
}

TEST_CASE(
    "observed completion: once the foreign use has finished any stream may reuse the "
    "block",
    "[reuse][observed]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    TestStream s2 = h.stream();
    void* block = h.allocate(kWholeSegment, s0);
    h.use(block, s0);
    const FakeDevice::OpId read = h.use(block, s1);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);

    void* busy = h.allocate(kWholeSegment, s2);
    CHECK(busy != block);
    CHECK_FALSE(h.device.finished(read));

    SECTION("seen by the pool's own events") {
        h.device.advanceAll();
        CHECK(h.allocate(kWholeSegment, s2) == block);
        CHECK(h.pool.stats().reusedObservedComplete == 1);
        CHECK(h.device.counters().eventSynchronizations == 0);
    }
    SECTION("seen by the application's query") {
        TestEvent& done = h.event();
        h.record(done, s1);
        TestEvent& ownerDone = h.event();
        h.record(ownerDone, s0);
        h.device.advanceAll();
        REQUIRE(h.query(done));
        REQUIRE(h.query(ownerDone));
        CHECK(h.allocate(kWholeSegment, s2) == block);
        CHECK(h.pool.stats().reusedObservedComplete == 1);
    }
    SECTION("seen by a device synchronisation") {
        h.synchronizeDevice();
        CHECK(h.allocate(kWholeSegment, s2) == block);
        CHECK(h.pool.stats().reusedObservedComplete == 1);
    }
}

TEST_CASE(
    "pool events are shared: many frees waiting on one stream record one event and "
    "probe once per stream",
    "[reuse][observed]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    std::vector<void*> blocks;
    for (int i = 0; i < 10; ++i) blocks.push_back(h.allocate(kWholeSegment, s0));
    for (void* block : blocks) h.use(block, s1);
    for (void* block : blocks) REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    CHECK(h.device.counters().eventRecords == 1);

    const uint64_t queriesBefore = h.device.counters().eventQueries;
    void* grown = h.allocate(kWholeSegment, s0);
    CHECK(std::find(blocks.begin(), blocks.end(), grown) == blocks.end());
    CHECK(h.device.counters().eventQueries - queriesBefore == 1);

    h.device.advanceAll();
    for (size_t i = 0; i < blocks.size(); ++i) {
        void* reused = h.allocate(kWholeSegment, s0);
        CHECK(std::find(blocks.begin(), blocks.end(), reused) != blocks.end());
    }
    CHECK(h.pool.stats().reusedObservedComplete == blocks.size());
    CHECK(h.device.counters().eventQueries - queriesBefore == 2);
}

TEST_CASE("a new segment is counted, and so are backend calls", "[reuse][stats]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    void* a = h.allocate(100, s0);
    void* b = h.allocate(100, s0);
    CHECK(reinterpret_cast<uintptr_t>(b) - reinterpret_cast<uintptr_t>(a) == 512);
    PoolStats stats = h.pool.stats();
    CHECK(stats.newSegments == 1);
    CHECK(stats.reusedSameStream == 1);  // carved from the segment's untouched remainder
    CHECK(stats.backendAllocations == 1);
    CHECK(stats.bytesInUse == 1024);
    CHECK(stats.bytesReserved == 2 * kMiB);
    CHECK(stats.bytesCached == 2 * kMiB - 1024);
    CHECK(stats.peakBytesInUse == 1024);
    REQUIRE(h.free(a, s0) == HAL_SUCCESS);
    REQUIRE(h.free(b, s0) == HAL_SUCCESS);
    stats = h.pool.stats();
    CHECK(stats.bytesInUse == 0);
    CHECK(stats.peakBytesInUse == 1024);
    CHECK(stats.bytesCached == 2 * kMiB);
    CHECK(stats.peakBytesReserved == 2 * kMiB);
}
