// The known ways to get cross-stream lifetimes wrong, one test each.
#include "pool_harness.hpp"

#include <catch2/catch.hpp>

using namespace polyhal::allocator;
using namespace polyhal::allocator::testing;

namespace {
constexpr size_t kWholeSegment = 12 * kMiB;
uintptr_t at(void* ptr) {
    return reinterpret_cast<uintptr_t>(ptr);
}
}  // namespace

TEST_CASE("merged blocks take the union of both blocks' uses", "[pitfall]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s2 = h.stream();
    // Two 256 KiB neighbours at the start of a 2 MiB segment, the rest of it in use.
    void* low = h.allocate(256 * kKiB, s0);
    void* high = h.allocate(256 * kKiB, s0);
    REQUIRE(at(high) == at(low) + 256 * kKiB);
    REQUIRE(h.allocate(1 * kMiB, s0) != nullptr);
    REQUIRE(h.allocate(512 * kKiB, s0) != nullptr);
    h.use(low, s0);
    REQUIRE(h.free(low, s0) == HAL_SUCCESS);
    TestEvent& afterLow = h.event();
    h.record(afterLow, s0);  // ordered after low's free, before high's last use
    h.use(high, s0);
    REQUIRE(h.free(high, s0) == HAL_SUCCESS);
    h.wait(s2, afterLow);

    // Only the merged block holds 512 KiB. s2 is ordered after low's free but not after
    // high's: taking the merged block would race with high's use.
    void* fresh = h.allocate(512 * kKiB, s2);
    REQUIRE(fresh != nullptr);
    CHECK(at(fresh) != at(low));
    CHECK(h.pool.stats().reusedProvenOrder == 0);
    // The owner takes the merged block.
    CHECK(h.allocate(512 * kKiB, s0) == low);
}

TEST_CASE("split blocks inherit the uses of the block they came from", "[pitfall]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    TestStream s2 = h.stream();
    void* block = h.allocate(16 * kKiB, s0);
    h.use(block, s1);
    TestEvent& done = h.event();
    h.record(done, s1);
    h.wait(s0, done);
    // Fill the rest of the segment so the freed block is the only free memory.
    void* rest = h.allocate(1 * kMiB - 16 * kKiB, s0);
    REQUIRE(at(rest) == at(block) + 16 * kKiB);
    REQUIRE(h.allocate(1 * kMiB, s0) != nullptr);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);

    void* firstHalf = h.allocate(8 * kKiB, s0);  // proven for s0: split
    CHECK(firstHalf == block);
    // The second half still carries s1's use, which s2 is not ordered after.
    void* other = h.allocate(8 * kKiB, s2);
    REQUIRE(other != nullptr);
    CHECK(at(other) != at(block) + 8 * kKiB);
    CHECK(h.allocate(8 * kKiB, s0) == static_cast<char*>(block) + 8 * kKiB);
}

TEST_CASE("destroying a stream does not lose the uses of its unfinished work", "[pitfall]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* block = h.allocate(kWholeSegment, s0);
    const FakeDevice::OpId read = h.use(block, s1);
    REQUIRE(h.destroy(s1) == HAL_SUCCESS);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);

    TestStream s2 = h.stream();  // must not take over s1's record while its work is queued
    CHECK(h.allocate(kWholeSegment, s0) != block);
    CHECK(h.allocate(kWholeSegment, s2) != block);
    CHECK_FALSE(h.device.finished(read));

    h.device.advanceAll();
    CHECK(h.allocate(kWholeSegment, s0) == block);
    CHECK(h.pool.stats().reusedObservedComplete == 1);
}

TEST_CASE(
    "a removed stream's record is reused only once its work is seen finished, and "
    "its old tickets prove nothing about the new stream",
    "[pitfall]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    h.work(s1);
    TestEvent& old = h.event();
    h.record(old, s1);
    REQUIRE(h.destroy(s1) == HAL_SUCCESS);
    h.device.advanceAll();
    REQUIRE(h.query(old));
    TestStream s3 = h.stream();
    CHECK(s3.pool == s1.pool);  // reused

    // s0 waited on the old stream's event; the new stream's work is not ordered by it.
    h.wait(s0, old);
    void* block = h.allocate(kWholeSegment, s3);
    h.use(block, s3);
    REQUIRE(h.free(block, s3) == HAL_SUCCESS);
    CHECK(h.allocate(kWholeSegment, s0) != block);
}

TEST_CASE("a use captured after the free keeps the block from other streams", "[pitfall]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* block = h.allocate(kWholeSegment, s0);
    h.use(block, s0);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    // Another thread's copy on s1 was enqueued before the free but reports its use after it.
    const FakeDevice::OpId late = h.use(block, s1);

    CHECK(h.allocate(kWholeSegment, s0) != block);
    CHECK(h.pool.stats().bytesPending == kWholeSegment);
    h.device.advanceAll();
    CHECK(h.device.finished(late));
    CHECK(h.allocate(kWholeSegment, s0) == block);
}

TEST_CASE("a wait binds to the recording current when it is enqueued, not to a later one",
          "[pitfall]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    void* block = h.allocate(kWholeSegment, s0);
    TestEvent& event = h.event();

    SECTION("re-recorded after the wait") {
        h.record(event, s1);  // before the use
        h.wait(s0, event);
        h.use(block, s1);
        h.record(event, s1);  // after the use: too late for the wait already enqueued
        REQUIRE(h.free(block, s0) == HAL_SUCCESS);
        CHECK(h.allocate(kWholeSegment, s0) != block);
        CHECK(h.pool.stats().reusedProvenOrder == 0);
    }
    SECTION("re-recorded before the wait") {
        h.record(event, s1);
        h.use(block, s1);
        h.record(event, s1);
        h.wait(s0, event);
        REQUIRE(h.free(block, s0) == HAL_SUCCESS);
        CHECK(h.allocate(kWholeSegment, s0) == block);
        CHECK(h.pool.stats().reusedProvenOrder == 1);
    }
}

TEST_CASE("a clock change takes a ticket: an event recorded before a wait does not carry it",
          "[pitfall]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    TestStream s2 = h.stream();
    void* block = h.allocate(kWholeSegment, s0);
    h.use(block, s1);
    TestEvent& used = h.event();
    h.record(used, s1);
    TestEvent& beforeWait = h.event();
    h.record(beforeWait, s0);  // s0 has not waited for s1 yet
    h.wait(s0, used);
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);  // proven for s0 only through the wait
    h.wait(s2, beforeWait);
    CHECK(h.allocate(kWholeSegment, s2) != block);
    TestEvent& afterWait = h.event();
    h.record(afterWait, s0);
    h.wait(s2, afterWait);
    CHECK(h.allocate(kWholeSegment, s2) == block);
}

TEST_CASE("events of another pool's streams prove nothing here", "[pitfall]") {
    PoolHarness h;
    PoolHarness other;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    TestStream foreign = other.stream();
    void* block = h.allocate(kWholeSegment, s0);
    h.use(block, s1);
    other.work(foreign);
    TestEvent& event = other.event();
    other.record(event, foreign);
    event.clock.applyIfCurrent(event.clock.generation(), [&](const VectorClock& clock) {
        h.pool.streamWaited(s0.pool, clock);
        h.pool.observeCompleted(clock);
    });
    REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    CHECK(h.allocate(kWholeSegment, s0) != block);
}

TEST_CASE(
    "an allocation is ordered on its stream only: freeing it on another stream keeps "
    "the earlier uses it was ordered after",
    "[pitfall]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    TestStream s2 = h.stream();
    void* block = h.allocate(kWholeSegment, s0);
    const FakeDevice::OpId read = h.use(block, s1);
    REQUIRE(h.free(block, s1) == HAL_SUCCESS);
    void* again = h.allocate(kWholeSegment, s1);  // safe for s1: its own order
    REQUIRE(again == block);
    REQUIRE(h.free(again, s0) == HAL_SUCCESS);  // no use in this lifetime
    CHECK(h.allocate(kWholeSegment, s2) != block);
    CHECK(h.allocate(kWholeSegment, s0) != block);
    CHECK_FALSE(h.device.finished(read));
}

// Two threads: one records the event again on another stream while the other makes a stream
// wait on it. The backend's wait may already see the new record, while the event's clock still
// describes the old one; applying the old clock would claim an ordering the wait never gave.
TEST_CASE("a wait that overlaps a newer record of its event claims no ordering", "[pitfall]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    TestStream s2 = h.stream();
    void* block = h.allocate(kWholeSegment, s0);
    const FakeDevice::OpId write = h.use(block, s0);
    TestEvent& event = h.event();
    h.record(event, s0);  // the old record: after the write on s0

    {
        // The new record, on s2, has reached the backend but not yet published its clock.
        EventClock::Recording recording(event.clock);
        VectorClock newer = h.pool.capture(s2.pool);
        h.device.record(event.device, s2.device);
        h.wait(s1, event);  // the backend makes s1 wait for s2, not for s0
        recording.commit(newer);
    }

    REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    CHECK(h.allocate(kWholeSegment, s1) != block);
    CHECK_FALSE(h.device.finished(write));
}

// The same overlap for a query: the backend reports the new record (on an idle stream)
// complete, which says nothing about the old record's work.
TEST_CASE("a query that overlaps a newer record of its event observes nothing", "[pitfall]") {
    PoolHarness h;
    TestStream s0 = h.stream();
    TestStream s1 = h.stream();
    TestStream idle = h.stream();
    void* block = h.allocate(kWholeSegment, s0);
    const FakeDevice::OpId write = h.use(block, s0);
    TestEvent& event = h.event();
    h.record(event, s0);

    {
        EventClock::Recording recording(event.clock);
        VectorClock newer = h.pool.capture(idle.pool);
        h.device.record(event.device, idle.device);
        CHECK(h.query(event));  // complete: the backend answers for the new record
        recording.commit(newer);
    }

    REQUIRE(h.free(block, s0) == HAL_SUCCESS);
    CHECK(h.allocate(kWholeSegment, s1) != block);
    CHECK_FALSE(h.device.finished(write));
}
