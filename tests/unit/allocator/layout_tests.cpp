// Sizes, segments and best fit.
#include "pool_harness.hpp"

#include <catch2/catch.hpp>

using namespace polyhal::allocator;
using namespace polyhal::allocator::testing;

namespace {
uintptr_t at(void* ptr) {
    return reinterpret_cast<uintptr_t>(ptr);
}
}  // namespace

TEST_CASE("sizes are rounded up to 512 bytes", "[layout]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    void* one = h.allocate(1, s0);
    void* next = h.allocate(513, s0);
    void* after = h.allocate(512, s0);
    CHECK(at(next) - at(one) == 512);
    CHECK(at(after) - at(next) == 1024);
    CHECK(h.pool.stats().bytesInUse == 2048);
    Allocation allocation{};
    REQUIRE(h.pool.find(next, &allocation));
    CHECK(allocation.size == 513);
}

TEST_CASE(
    "segment sizes: 2 MiB for small requests, 20 MiB below 10 MiB, else rounded to "
    "2 MiB",
    "[layout]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    REQUIRE(h.allocate(1 * kMiB, s0) != nullptr);
    CHECK(h.pool.stats().bytesReserved == 2 * kMiB);
    REQUIRE(h.allocate(10 * kMiB, s0) != nullptr);
    CHECK(h.pool.stats().bytesReserved == 12 * kMiB);
    REQUIRE(h.allocate(11 * kMiB + 1, s0) != nullptr);
    CHECK(h.pool.stats().bytesReserved == 24 * kMiB);
    REQUIRE(h.allocate(1 * kMiB + 1, s0) != nullptr);
    CHECK(h.pool.stats().bytesReserved == 44 * kMiB);
    CHECK(h.device.bytesAllocated() == 44 * kMiB);
    CHECK(h.pool.stats().backendAllocations == 4);
}

TEST_CASE("small and large requests never share a segment", "[layout]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    void* small = h.allocate(4 * kKiB, s0);
    REQUIRE(h.free(small, s0) == HAL_SUCCESS);
    REQUIRE(h.allocate(1536 * kKiB, s0) !=
            nullptr);  // 2 MiB of free small memory does not serve it
    CHECK(h.pool.stats().newSegments == 2);
    REQUIRE(h.allocate(4 * kKiB, s0) == small);
}

TEST_CASE("a large block is not split into a sliver of 1 MiB or less", "[layout]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    REQUIRE(h.allocate(19 * kMiB + 512 * kKiB, s0) != nullptr);
    CHECK(h.pool.stats().bytesInUse == 20 * kMiB);
    void* a = h.allocate(2 * kMiB, s0);
    void* b = h.allocate(2 * kMiB, s0);
    CHECK(at(b) - at(a) == 2 * kMiB);  // a 20 MiB segment split with a large remainder
}

TEST_CASE("best fit: the smallest free block that holds the request", "[layout]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    void* big = h.allocate(16 * kKiB, s0);
    REQUIRE(h.allocate(512, s0) != nullptr);
    void* tiny = h.allocate(4 * kKiB, s0);
    REQUIRE(h.allocate(512, s0) != nullptr);
    void* mid = h.allocate(8 * kKiB, s0);
    REQUIRE(h.allocate(512, s0) != nullptr);
    for (void* block : {big, tiny, mid}) REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    CHECK(h.allocate(4 * kKiB, s0) == tiny);
    CHECK(h.allocate(6 * kKiB, s0) == mid);
    CHECK(h.allocate(10 * kKiB, s0) == big);
    CHECK(h.allocate(6 * kKiB, s0) == static_cast<char*>(big) + 10 * kKiB);  // the split rest
}

TEST_CASE("free neighbours coalesce when nothing smaller fits", "[layout]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    void* a = h.allocate(512 * kKiB, s0);
    void* b = h.allocate(512 * kKiB, s0);
    void* c = h.allocate(1 * kMiB, s0);  // fills the segment
    REQUIRE(h.free(a, s0) == HAL_SUCCESS);
    REQUIRE(h.free(b, s0) == HAL_SUCCESS);
    REQUIRE(h.free(c, s0) == HAL_SUCCESS);
    CHECK(h.allocate(1 * kMiB, s0) == c);  // exact fit first, no merging needed
    REQUIRE(h.free(c, s0) == HAL_SUCCESS);
    CHECK(h.allocate(1 * kMiB, s0) == c);
    CHECK(h.allocate(1 * kMiB, s0) == a);  // a and b merged into one 1 MiB block
    CHECK(h.pool.stats().newSegments == 1);
}
