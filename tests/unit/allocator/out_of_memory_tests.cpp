// Step 5 of the reuse order: synchronise, release cached segments, retry once, then fail with
// a message that explains where the memory is.
#include "pool_harness.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace polyhal::allocator;
using namespace polyhal::allocator::testing;

namespace {
constexpr size_t kWholeSegment = 12 * kMiB;
}  // namespace

TEST_CASE("out of memory: blocks waiting on other streams are reclaimed by synchronising",
          "[oom]") {
    PoolHarness h(2 * kWholeSegment);
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* pending = h.allocate(kWholeSegment, s0);
    const FakeDevice::OpId read = h.use(pending, s1);
    REQUIRE(h.free(pending, s0) == HAL_SUCCESS);
    REQUIRE(h.allocate(kWholeSegment, s0) != nullptr);

    void* reclaimed = h.allocate(kWholeSegment, s0);
    CHECK(reclaimed == pending);
    CHECK(h.device.finished(read));
    const PoolStats stats = h.pool.stats();
    CHECK(stats.oomSynchronized == 1);
    CHECK(stats.bytesPending == 0);
    CHECK(h.device.counters().eventSynchronizations >= 1);
}

TEST_CASE("out of memory: blocks the owner freed but no event covers are reclaimed too", "[oom]") {
    PoolHarness h(2 * kWholeSegment);
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* block = h.allocate(kWholeSegment, s0);
    h.use(block, s0);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);  // s1 is not ordered after this free
    REQUIRE(h.allocate(kWholeSegment, s1) != nullptr);
    CHECK(h.allocate(kWholeSegment, s1) == block);
    CHECK(h.pool.stats().oomSynchronized == 1);
}

TEST_CASE("out of memory: cached segments are returned before retrying", "[oom]") {
    PoolHarness h(13 * kMiB);
    TestStream s0 = h.stream();
    void* small = h.allocate(4 * kKiB, s0);
    REQUIRE(h.free(small, s0) == HAL_SUCCESS);  // a cached 2 MiB small segment
    REQUIRE(h.allocate(kWholeSegment, s0) != nullptr);
    const PoolStats stats = h.pool.stats();
    CHECK(stats.oomSynchronized == 1);
    CHECK(stats.backendFrees == 1);
    CHECK(stats.bytesReserved == kWholeSegment);
}

TEST_CASE(
    "out of memory: a device without room for the usual segment gets the smallest that "
    "serves the request, with nothing synchronised",
    "[oom]") {
    PoolHarness h(4 * kMiB);
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    const FakeDevice::OpId unfinished = h.work(s1);
    void* block = h.allocate(1536 * kKiB, s0);  // would get a 20 MiB segment
    CHECK(block != nullptr);
    CHECK_FALSE(h.device.finished(unfinished));
    CHECK(h.device.counters().eventSynchronizations == 0);
    const PoolStats stats = h.pool.stats();
    CHECK(stats.bytesReserved == 2 * kMiB);
    CHECK(stats.newSegments == 1);
    CHECK(stats.oomSynchronized == 0);
}

TEST_CASE("out of memory: the retry asks only for what the request needs", "[oom]") {
    PoolHarness h(3 * kMiB);
    TestStream s0 = h.stream();
    void* small = h.allocate(4 * kKiB, s0);
    REQUIRE(h.free(small, s0) == HAL_SUCCESS);  // a cached 2 MiB small segment
    void* block = h.allocate(1536 * kKiB, s0);  // would get a 20 MiB segment
    CHECK(block != nullptr);
    const PoolStats stats = h.pool.stats();
    CHECK(stats.bytesReserved == 2 * kMiB);
    CHECK(stats.backendFrees == 1);
    CHECK(stats.oomSynchronized == 1);
}

TEST_CASE("out of memory: the error says what was requested and where memory is", "[oom]") {
    PoolHarness h(14 * kMiB);
    TestStream s0 = h.stream();
    REQUIRE(h.allocate(512, s0) != nullptr);  // pins a 2 MiB small segment
    REQUIRE(h.allocate(kWholeSegment, s0) != nullptr);
    void* ptr = nullptr;
    CHECK(h.tryAllocate(1536 * kKiB, s0, &ptr) == HAL_ERROR_OUT_OF_MEMORY);
    const std::string message = h.device.lastErrorMessage();
    CHECK(message.find("requested 1572864 bytes") != std::string::npos);
    CHECK(message.find("in use 12583424") != std::string::npos);
    CHECK(message.find("reserved 14680064") != std::string::npos);
    CHECK(message.find("pending 0") != std::string::npos);
    CHECK(message.find("largest free block 2096640 bytes") != std::string::npos);
    CHECK(h.pool.stats().oomSynchronized == 0);
    // The pool still works.
    REQUIRE(h.allocate(512, s0) != nullptr);
}
