// Misuse, lookup, trimming, attributes and reset.
#include "pool_harness.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace polyhal::allocator;
using namespace polyhal::allocator::testing;

namespace {
constexpr size_t kWholeSegment = 12 * kMiB;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}
}  // namespace

TEST_CASE("freeing a pointer the pool did not allocate is an error that changes nothing",
          "[api][invalid-free]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    void* block = h.allocate(4 * kKiB, s0);
    const PoolStats before = h.pool.stats();
    int local = 0;

    SECTION("a foreign pointer") {
        CHECK(h.free(&local, s0) == HAL_ERROR_INVALID_VALUE);
        CHECK(contains(h.device.lastErrorMessage(), "was not allocated by the memory pool"));
    }
    SECTION("an interior pointer") {
        CHECK(h.free(static_cast<char*>(block) + 512, s0) == HAL_ERROR_INVALID_VALUE);
        CHECK(contains(h.device.lastErrorMessage(), "points inside the allocation"));
    }
    SECTION("a pointer into free pool memory") {
        CHECK(h.free(static_cast<char*>(block) + 64 * kKiB, s0) == HAL_ERROR_INVALID_VALUE);
        CHECK(contains(h.device.lastErrorMessage(), "not a live allocation"));
    }
    const PoolStats after = h.pool.stats();
    CHECK(after.bytesInUse == before.bytesInUse);
    CHECK(after.bytesCached == before.bytesCached);
    Allocation allocation{};
    CHECK(h.pool.find(block, &allocation));
}

TEST_CASE("a double free is an error and the block is handed out only once",
          "[api][invalid-free]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    void* block = h.allocate(4 * kKiB, s0);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    CHECK(h.free(block, s0) == HAL_ERROR_INVALID_VALUE);
    CHECK(contains(h.device.lastErrorMessage(), "freed already"));
    CHECK(h.pool.stats().bytesInUse == 0);
    void* first = h.allocate(4 * kKiB, s0);
    void* second = h.allocate(4 * kKiB, s0);
    CHECK(first == block);
    CHECK(second != block);
}

TEST_CASE("allocating zero bytes is an error", "[api]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    void* ptr = nullptr;
    CHECK(h.tryAllocate(0, s0, &ptr) == HAL_ERROR_INVALID_VALUE);
    CHECK(ptr == nullptr);
    CHECK(h.tryAllocate(~size_t{0}, s0, &ptr) == HAL_ERROR_OUT_OF_MEMORY);
}

TEST_CASE("find() reports the live allocation containing a pointer", "[api]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    void* block = h.allocate(1000, s0);
    Allocation allocation{};
    REQUIRE(h.pool.find(static_cast<char*>(block) + 999, &allocation));
    CHECK(allocation.base == block);
    CHECK(allocation.size == 1000);
    CHECK_FALSE(h.pool.find(static_cast<char*>(block) + 1024, &allocation));
    int local = 0;
    CHECK_FALSE(h.pool.find(&local, &allocation));
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    CHECK_FALSE(h.pool.find(block, &allocation));
}

TEST_CASE("uses of pointers outside the pool are ignored; interior pointers count", "[api][uses]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* block = h.allocate(kWholeSegment, s0);
    int local = 0;
    const void* args[] = {&local, reinterpret_cast<void*>(uintptr_t{42}), nullptr,
                          static_cast<char*>(block) + 4096};
    h.device.submit(s1.device);
    h.pool.recordUses(args, 4, s1.pool, h.pool.submitted(s1.pool));
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    CHECK(h.pool.stats().bytesPending == kWholeSegment);
    CHECK(h.allocate(kWholeSegment, s0) != block);
}

TEST_CASE("trim returns fully free, finished segments and keeps at least what is asked",
          "[api][trim]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    void* a = h.allocate(12 * kMiB, s0);
    void* b = h.allocate(14 * kMiB, s0);
    void* live = h.allocate(4 * kKiB, s0);
    REQUIRE(h.free(a, s0) == HAL_SUCCESS);
    REQUIRE(h.free(b, s0) == HAL_SUCCESS);
    const uint64_t reserved = 28 * kMiB;
    REQUIRE(h.pool.stats().bytesReserved == reserved);

    REQUIRE(h.pool.trim(16 * kMiB) == HAL_SUCCESS);
    CHECK(h.pool.stats().bytesReserved == 16 * kMiB);  // 14 MiB + the small segment in use
    REQUIRE(h.pool.trim(0) == HAL_SUCCESS);
    CHECK(h.pool.stats().bytesReserved == 2 * kMiB);
    CHECK(h.pool.stats().backendFrees == 2);
    CHECK(h.device.bytesAllocated() == 2 * kMiB);
    Allocation allocation{};
    CHECK(h.pool.find(live, &allocation));
}

TEST_CASE("trim keeps segments whose last use has not been seen finished", "[api][trim]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    void* block = h.allocate(kWholeSegment, s0);
    h.use(block, s0);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    REQUIRE(h.pool.trim(0) == HAL_SUCCESS);
    CHECK(h.pool.stats().bytesReserved == kWholeSegment);
    h.synchronize(s0);
    REQUIRE(h.pool.trim(0) == HAL_SUCCESS);
    CHECK(h.pool.stats().bytesReserved == 0);
    CHECK(h.device.counters().invalidFrees == 0);
}

TEST_CASE("an exported block names its segment, which is released as any other once freed",
          "[api][export]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    void* first = h.allocate(4 * kKiB, s0);
    void* second = h.allocate(4 * kKiB, s0);
    ExportedBlock exported{};
    CHECK_FALSE(h.pool.exportBlock(static_cast<char*>(second) + 512, &exported));
    int local = 0;
    CHECK_FALSE(h.pool.exportBlock(&local, &exported));
    REQUIRE(h.pool.exportBlock(second, &exported));
    CHECK(exported.segmentSize == 2 * kMiB);
    CHECK(static_cast<char*>(exported.segmentBase) + exported.offset == second);
    CHECK(exported.size == 4 * kKiB);
    CHECK(exported.offset ==
          static_cast<size_t>(static_cast<char*>(second) - static_cast<char*>(first)));
    REQUIRE(h.free(first, s0) == HAL_SUCCESS);
    REQUIRE(h.free(second, s0) == HAL_SUCCESS);
    CHECK_FALSE(h.pool.exportBlock(second, &exported));  // freed
    h.synchronize(s0);
    REQUIRE(h.pool.trim(0) == HAL_SUCCESS);
    CHECK(h.pool.stats().bytesReserved == 0);
    CHECK(h.pool.stats().backendFrees == 1);
}

TEST_CASE("attributes switch reuse paths off and set a release threshold", "[api][attributes]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    const PoolAttributes defaults = h.pool.attributes();
    CHECK(defaults.releaseThreshold == UINT64_MAX);
    CHECK(defaults.reuseProvenOrder);
    CHECK(defaults.reuseObservedCompletion);

    SECTION("without proven order, flow back does not reuse") {
        PoolAttributes attributes = defaults;
        attributes.reuseProvenOrder = false;
        h.pool.setAttributes(attributes);
        CHECK_FALSE(h.pool.attributes().reuseProvenOrder);
        void* block = h.allocate(kWholeSegment, s0);
        h.use(block, s1);
        TestEvent& done = h.event();
        h.record(done, s1);
        h.wait(s0, done);
        REQUIRE(h.free(block, s0) == HAL_SUCCESS);
        CHECK(h.allocate(kWholeSegment, s0) != block);
        CHECK(h.pool.stats().reusedProvenOrder == 0);
        h.device.advanceAll();  // still reusable once seen finished
        CHECK(h.allocate(kWholeSegment, s0) == block);
        CHECK(h.pool.stats().reusedObservedComplete == 1);
    }
    SECTION("without observed completion, a finished foreign use does not release the block") {
        PoolAttributes attributes = defaults;
        attributes.reuseObservedCompletion = false;
        h.pool.setAttributes(attributes);
        void* block = h.allocate(kWholeSegment, s0);
        h.use(block, s1);
        REQUIRE(h.free(block, s0) == HAL_SUCCESS);
        h.synchronizeDevice();
        CHECK(h.allocate(kWholeSegment, s0) != block);
        CHECK(h.device.counters().eventRecords == 0);
        CHECK(h.pool.stats().reusedObservedComplete == 0);
    }
    SECTION("above the release threshold, a synchronisation returns free segments") {
        PoolAttributes attributes = defaults;
        attributes.releaseThreshold = 2 * kMiB;
        h.pool.setAttributes(attributes);
        void* block = h.allocate(kWholeSegment, s0);
        void* small = h.allocate(4 * kKiB, s0);
        REQUIRE(h.free(block, s0) == HAL_SUCCESS);
        REQUIRE(h.free(small, s0) == HAL_SUCCESS);
        CHECK(h.pool.stats().bytesReserved == kWholeSegment + 2 * kMiB);
        h.synchronize(s0);
        CHECK(h.pool.stats().bytesReserved == 2 * kMiB);
    }
}

TEST_CASE("reset forgets every block and returns every segment", "[api]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* live = h.allocate(kWholeSegment, s0);
    void* pending = h.allocate(64 * kKiB, s0);
    h.use(pending, s1);
    REQUIRE(h.free(pending, s0) == HAL_SUCCESS);
    h.synchronizeDevice();
    REQUIRE(h.pool.reset() == HAL_SUCCESS);
    const PoolStats stats = h.pool.stats();
    CHECK(stats.bytesReserved == 0);
    CHECK(stats.bytesInUse == 0);
    CHECK(stats.bytesPending == 0);
    CHECK(h.device.bytesAllocated() == 0);
    Allocation allocation{};
    CHECK_FALSE(h.pool.find(live, &allocation));
    CHECK(h.allocate(4 * kKiB, s0) != nullptr);
}
