// The stream-aware pool (halMallocAsync, halFreeAsync, halRecordStream, statistics, trimming,
// attributes): when memory freed on one stream may be handed to other work, checked through
// the public API only, so every backend runs the same cases.
//
// Each case starts from an empty cache (startWithEmptyCache) so that its allocations come
// from fresh segments and no block cached by an earlier case can serve them, and restores every
// attribute it changes: the suite runs all cases in one process.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels.hpp"
#include "pool_helpers.hpp"

using cts::AttributeOverride;
using cts::currentDevice;
using cts::fillDevice;
using cts::kFillBlock;
using cts::orderAfter;
using cts::poolStats;
using cts::startWithEmptyCache;
using cts::tooLargeToExhaust;

namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;
constexpr unsigned char kOriginal = 0xA5;   // what the first owner writes
constexpr unsigned char kOverwrite = 0x3C;  // what later work writes into the memory it gets

std::string lastError() {
    return halGetLastErrorMessage();
}

// The text polyhal's messages give for a pointer ("0x7f...").
std::string pointerText(const void* pointer) {
    char text[32];
    std::snprintf(text, sizeof text, "%p", pointer);
    return text;
}

size_t countDifferent(const void* bytes, size_t size, unsigned char expected) {
    const auto* data = static_cast<const unsigned char*>(bytes);
    size_t different = 0;
    for (size_t i = 0; i < size; ++i) different += data[i] != expected;
    return different;
}

// A block of `size` bytes allocated on `owner` and filled with kOriginal by `owner`'s work.
void* allocateWritten(halStream owner, size_t size) {
    void* block = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&block, size, owner));
    HAL_REQUIRE_OK(halMemsetAsync(block, size, kOriginal, size, owner));
    return block;
}

// Orders the later work of `later` after the work submitted to `earlier` so far: an event
// recorded on `earlier` and waited on by `later`.
bool hasHostFunctions() {
    return (cts::deviceProperties().capabilities & HAL_DEVICE_CAP_HOST_FUNCTIONS) != 0;
}

// What the pool did when the host freed a block another stream reads, then allocated again.
struct Reallocation {
    bool sameBlock = false;
    halMemPoolStats before{};  // just before the free
    halMemPoolStats after{};   // just after the new allocation
    // The reader was held by a gate and the allocation returned only once it had passed: the
    // pool waited for the reader on the host.
    bool waitedForReader = false;
};

// The situation of the MindSpore stream guide: a block allocated and written on `owner` is read
// by a copy on `reader` (ordered after the write), held before the copy by a gate where the
// device runs host functions. orderAfterRead() may then order `owner` after the read
// (`ownerWaitsForRead` says whether it does). The host frees the block on `owner` and at once
// allocates the same size there again, with no synchronisation in between; `owner` writes
// kOverwrite into what it got. Whatever the pool decided, the read must see kOriginal.
template <typename OrderAfterRead>
Reallocation freeWhileReadElsewhere(halStream owner, halStream reader, bool ownerWaitsForRead,
                                    OrderAfterRead orderAfterRead) {
    constexpr size_t kSize = 256 * kKiB;
    cts::HostMemory seen(kSize);
    std::memset(seen.get(), 0, kSize);
    cts::Gate gate;
    void* block = allocateWritten(owner, kSize);
    orderAfter(owner, reader);
    const bool held = hasHostFunctions();
    if (held) gate.enqueue(reader);
    HAL_REQUIRE_OK(
        halMemcpyAsync(seen.get(), kSize, block, kSize, HAL_MEMCPY_DEVICE_TO_HOST, reader));
    orderAfterRead();

    Reallocation result;
    result.before = poolStats();
    HAL_REQUIRE_OK(halFreeAsync(block, owner));
    void* again = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&again, kSize, owner));
    result.after = poolStats();
    result.sameBlock = again == block;
    result.waitedForReader = held && gate.finished();

    HAL_REQUIRE_OK(halMemsetAsync(again, kSize, kOverwrite, kSize, owner));
    // Unless the device orders the overwrite after the read, let it run before the read does, so
    // that memory handed out too early is caught.
    if (!ownerWaitsForRead) HAL_REQUIRE_OK(halSynchronizeStream(owner));
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(reader));
    HAL_REQUIRE_OK(halSynchronizeStream(owner));
    CHECK(countDifferent(seen.get(), kSize, kOriginal) == 0);
    std::vector<unsigned char> overwritten(kSize);
    HAL_REQUIRE_OK(halMemcpy(overwritten.data(), kSize, again, kSize, HAL_MEMCPY_DEVICE_TO_HOST));
    CHECK(countDifferent(overwritten.data(), kSize, kOverwrite) == 0);
    HAL_REQUIRE_OK(halFreeAsync(again, owner));
    return result;
}

}  // namespace

// ---- Reuse across streams -----------------------------------------------------------------

TEST_CASE("a block freed while another stream still reads it is not given to new work",
          "[pool][independent_streams]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    startWithEmptyCache();
    cts::Stream s0, s1;
    const Reallocation outcome = freeWhileReadElsewhere(s0, s1, false, [] {});
    CHECK_FALSE(outcome.sameBlock);
    CHECK(outcome.after.bytesPending >= 256 * kKiB);  // kept for the held reader
    CHECK_FALSE(outcome.waitedForReader);
}

TEST_CASE("flow back: a block whose reader is ordered before the owner is reused at once",
          "[pool]") {
    startWithEmptyCache();
    cts::Stream s0, s1;
    const Reallocation outcome = freeWhileReadElsewhere(s0, s1, true, [&] { orderAfter(s1, s0); });
    CHECK(outcome.sameBlock);
    CHECK(outcome.after.reusedProvenOrder == outcome.before.reusedProvenOrder + 1);
    CHECK_FALSE(outcome.waitedForReader);
}

TEST_CASE("with reuse by proven order switched off, flow back does not reuse the block", "[pool]") {
    startWithEmptyCache();
    AttributeOverride noProvenOrder(HAL_MEMPOOL_ATTR_REUSE_PROVEN_ORDER, 0);
    cts::Stream s0, s1;
    const Reallocation outcome = freeWhileReadElsewhere(s0, s1, true, [&] { orderAfter(s1, s0); });
    CHECK_FALSE(outcome.sameBlock);
    CHECK(outcome.after.reusedProvenOrder == outcome.before.reusedProvenOrder);
    CHECK_FALSE(outcome.waitedForReader);
}

TEST_CASE("a chain of events s1 -> s2 -> s0 proves the reader finished before the owner",
          "[pool]") {
    startWithEmptyCache();
    cts::Stream s0, s1, s2;
    const Reallocation outcome = freeWhileReadElsewhere(s0, s1, true, [&] {
        orderAfter(s1, s2);
        orderAfter(s2, s0);
    });
    CHECK(outcome.sameBlock);
    CHECK(outcome.after.reusedProvenOrder == outcome.before.reusedProvenOrder + 1);
    CHECK_FALSE(outcome.waitedForReader);
}

TEST_CASE("a chain that stops short of the owner proves nothing", "[pool][independent_streams]") {
    startWithEmptyCache();
    cts::Stream s0, s1, s2;
    // s2 is ordered after the read, but s0 never waits for s2.
    const Reallocation outcome = freeWhileReadElsewhere(s0, s1, false, [&] { orderAfter(s1, s2); });
    CHECK_FALSE(outcome.sameBlock);
    CHECK(outcome.after.reusedProvenOrder == outcome.before.reusedProvenOrder);
}

TEST_CASE("a wait proves only the point its event held when the wait was enqueued",
          "[pool][independent_streams]") {
    startWithEmptyCache();
    cts::Stream s0, s1, s2;
    cts::Event event(HAL_EVENT_DISABLE_TIMING);
    SECTION("re-recorded elsewhere before the wait: nothing about the read is proven") {
        const Reallocation outcome = freeWhileReadElsewhere(s0, s1, false, [&] {
            HAL_REQUIRE_OK(halRecordEvent(event, s1));
            HAL_REQUIRE_OK(halRecordEvent(event, s2));
            HAL_REQUIRE_OK(halStreamWaitEvent(s0, event));
        });
        CHECK_FALSE(outcome.sameBlock);
        CHECK(outcome.after.reusedProvenOrder == outcome.before.reusedProvenOrder);
    }
    SECTION("re-recorded elsewhere after the wait: the wait still proves the read") {
        const Reallocation outcome = freeWhileReadElsewhere(s0, s1, true, [&] {
            HAL_REQUIRE_OK(halRecordEvent(event, s1));
            HAL_REQUIRE_OK(halStreamWaitEvent(s0, event));
            HAL_REQUIRE_OK(halRecordEvent(event, s2));
        });
        CHECK(outcome.sameBlock);
        CHECK(outcome.after.reusedProvenOrder == outcome.before.reusedProvenOrder + 1);
    }
}

TEST_CASE("once the host has seen a use finish, any stream may reuse the block", "[pool]") {
    startWithEmptyCache();
    constexpr size_t kSize = 256 * kKiB;
    cts::Stream s0, s1, s2;
    cts::Event readDone(HAL_EVENT_DISABLE_TIMING);
    cts::HostMemory seen(kSize);
    void* block = allocateWritten(s0, kSize);
    orderAfter(s0, s1);
    HAL_REQUIRE_OK(halMemcpyAsync(seen.get(), kSize, block, kSize, HAL_MEMCPY_DEVICE_TO_HOST, s1));
    HAL_REQUIRE_OK(halRecordEvent(readDone, s1));
    HAL_REQUIRE_OK(halFreeAsync(block, s0));
    CHECK(poolStats().bytesPending >= kSize);  // no one has seen the read finish yet

    SECTION("seen by halSynchronizeStream") {
        HAL_REQUIRE_OK(halSynchronizeStream(s1));
    }
    SECTION("seen by halQueryEvent") {
        REQUIRE(cts::waitUntil([&] { return halQueryEvent(readDone) == HAL_SUCCESS; }));
    }
    // s2 has no event ordering with s0 or s1: only the observed completion lets it reuse.
    const halMemPoolStats before = poolStats();
    void* again = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&again, kSize, s2));
    CHECK(again == block);
    CHECK(poolStats().reusedObservedComplete == before.reusedObservedComplete + 1);
    CHECK(countDifferent(seen.get(), kSize, kOriginal) == 0);
    HAL_REQUIRE_OK(halFreeAsync(again, s2));
    HAL_REQUIRE_OK(halSynchronizeStream(s2));
}

TEST_CASE("halFree keeps a block that another stream still reads from every stream",
          "[pool][independent_streams]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    startWithEmptyCache();
    constexpr size_t kSize = 128 * kKiB;
    cts::Stream reader, other;
    cts::HostMemory seen(kSize);
    cts::Gate gate;
    void* block = nullptr;
    HAL_REQUIRE_OK(halMalloc(&block, kSize));
    HAL_REQUIRE_OK(halMemset(block, kSize, kOriginal, kSize));
    gate.enqueue(reader);
    HAL_REQUIRE_OK(
        halMemcpyAsync(seen.get(), kSize, block, kSize, HAL_MEMCPY_DEVICE_TO_HOST, reader));
    HAL_REQUIRE_OK(halFree(block));
    CHECK_FALSE(gate.finished());  // halFree did not wait for the reader

    void* onOther = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&onOther, kSize, other));
    void* onDefault = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&onDefault, kSize, nullptr));
    CHECK(onOther != block);
    CHECK(onDefault != block);
    HAL_REQUIRE_OK(halMemsetAsync(onOther, kSize, kOverwrite, kSize, other));
    HAL_REQUIRE_OK(halMemsetAsync(onDefault, kSize, kOverwrite, kSize, nullptr));
    HAL_REQUIRE_OK(halSynchronizeStream(other));
    HAL_REQUIRE_OK(halSynchronizeStream(nullptr));
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(reader));
    CHECK(countDifferent(seen.get(), kSize, kOriginal) == 0);
    HAL_REQUIRE_OK(halFreeAsync(onOther, other));
    HAL_REQUIRE_OK(halFreeAsync(onDefault, nullptr));
}

TEST_CASE("a pointer kernel argument into a block counts as a use", "[pool][kernel]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Module module;
    halFunction fill = nullptr;
    if (!cts::loadKernel("fill_u32", module, &fill)) return;
    startWithEmptyCache();
    constexpr size_t kSize = 64 * kKiB;
    cts::Stream s0, s1;
    cts::Gate gate;
    void* block = allocateWritten(s0, kSize);
    orderAfter(s0, s1);
    gate.enqueue(s1);
    // The argument points inside the block, not at its start.
    void* inside = static_cast<unsigned char*>(block) + 4 * kKiB;
    const uint32_t value = 0x01020304u, count = 1024;
    HAL_REQUIRE_OK(
        cts::launch1d(fill, count, 64, {cts::arg(inside), cts::arg(value), cts::arg(count)}, s1));
    const halMemPoolStats before = poolStats();
    HAL_REQUIRE_OK(halFreeAsync(block, s0));
    CHECK(poolStats().bytesPending == before.bytesPending + kSize);
    void* again = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&again, kSize, s0));
    CHECK(again != block);
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(s1));
    HAL_REQUIRE_OK(halFreeAsync(again, s0));
    HAL_REQUIRE_OK(halSynchronizeStream(s0));
}

TEST_CASE("halRecordStream declares a use the core cannot see", "[pool]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_ACCESSIBLE);
    startWithEmptyCache();
    constexpr size_t kSize = 64 * kKiB;
    cts::Stream s0, s1;
    cts::Gate gate;
    // A host function reading the block through a pointer polyhal never sees, as a kernel
    // would through a pointer stored inside a struct.
    struct HiddenRead {
        const unsigned char* block;
        std::vector<unsigned char> seen;
    };
    void* block = allocateWritten(s0, kSize);
    HiddenRead read{static_cast<const unsigned char*>(block), {}};
    orderAfter(s0, s1);
    gate.enqueue(s1);
    HAL_REQUIRE_OK(halLaunchHostFunc(
        s1,
        [](void* opaque) {
            auto* hidden = static_cast<HiddenRead*>(opaque);
            hidden->seen.assign(hidden->block, hidden->block + kSize);
        },
        &read));
    HAL_REQUIRE_OK(halRecordStream(block, s1));

    const halMemPoolStats before = poolStats();
    HAL_REQUIRE_OK(halFreeAsync(block, s0));
    // Without the declaration the block would be free for s0 at once; with it, it waits.
    CHECK(poolStats().bytesPending == before.bytesPending + kSize);
    void* again = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&again, kSize, s0));
    CHECK(again != block);
    HAL_REQUIRE_OK(halMemsetAsync(again, kSize, kOverwrite, kSize, s0));
    HAL_REQUIRE_OK(halSynchronizeStream(s0));
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(s1));
    REQUIRE(read.seen.size() == kSize);
    CHECK(countDifferent(read.seen.data(), kSize, kOriginal) == 0);
    HAL_REQUIRE_OK(halFreeAsync(again, s0));
}

TEST_CASE("halRecordStream validates its arguments and ignores memory outside the pool", "[pool]") {
    cts::Stream stream;
    CHECK(halRecordStream(nullptr, stream) == HAL_ERROR_INVALID_VALUE);
    int local = 0;
    HAL_CHECK_OK(halRecordStream(&local, stream));
    halStream destroyed = nullptr;
    HAL_REQUIRE_OK(halCreateStream(&destroyed));
    HAL_REQUIRE_OK(halDestroyStream(destroyed));
    CHECK(halRecordStream(&local, destroyed) == HAL_ERROR_INVALID_HANDLE);
}

TEST_CASE("destroying a stream whose work still uses a block keeps the block from others",
          "[pool][independent_streams]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    startWithEmptyCache();
    constexpr size_t kSize = 128 * kKiB;
    cts::Stream s0;
    cts::HostMemory seen(kSize);
    cts::Gate gate;
    std::atomic<bool> readDone{false};
    void* block = allocateWritten(s0, kSize);
    halStream doomed = nullptr;
    HAL_REQUIRE_OK(halCreateStream(&doomed));
    orderAfter(s0, doomed);
    gate.enqueue(doomed);
    HAL_REQUIRE_OK(
        halMemcpyAsync(seen.get(), kSize, block, kSize, HAL_MEMCPY_DEVICE_TO_HOST, doomed));
    cts::enqueueSet(doomed, &readDone);
    HAL_REQUIRE_OK(halDestroyStream(doomed));  // returns at once; the held work still runs

    HAL_REQUIRE_OK(halFreeAsync(block, s0));
    CHECK(poolStats().bytesPending >= kSize);
    cts::Stream successor;  // may take over the destroyed stream's place in the pool
    void* onOwner = nullptr;
    void* onSuccessor = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&onOwner, kSize, s0));
    HAL_REQUIRE_OK(halMallocAsync(&onSuccessor, kSize, successor));
    CHECK(onOwner != block);
    CHECK(onSuccessor != block);
    HAL_REQUIRE_OK(halMemsetAsync(onOwner, kSize, kOverwrite, kSize, s0));
    HAL_REQUIRE_OK(halMemsetAsync(onSuccessor, kSize, kOverwrite, kSize, successor));
    HAL_REQUIRE_OK(halSynchronizeStream(s0));
    HAL_REQUIRE_OK(halSynchronizeStream(successor));
    gate.open();
    REQUIRE(cts::waitUntil([&] { return readDone.load(); }));
    CHECK(countDifferent(seen.get(), kSize, kOriginal) == 0);
    HAL_REQUIRE_OK(halFreeAsync(onOwner, s0));
    HAL_REQUIRE_OK(halFreeAsync(onSuccessor, successor));
}

// ---- Errors, statistics, trimming and attributes --------------------------------------------

TEST_CASE("halMallocAsync validates its arguments", "[pool]") {
    cts::Stream stream;
    void* block = nullptr;
    CHECK(halMallocAsync(nullptr, 64, stream) == HAL_ERROR_INVALID_VALUE);
    CHECK(halMallocAsync(&block, 0, stream) == HAL_ERROR_INVALID_VALUE);
    CHECK(block == nullptr);
    halStream destroyed = nullptr;
    HAL_REQUIRE_OK(halCreateStream(&destroyed));
    HAL_REQUIRE_OK(halDestroyStream(destroyed));
    CHECK(halMallocAsync(&block, 64, destroyed) == HAL_ERROR_INVALID_HANDLE);
    CHECK(block == nullptr);
}

TEST_CASE("freeing what is not a live pool allocation is refused and changes nothing", "[pool]") {
    cts::Stream stream;
    void* block = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&block, 4 * kKiB, stream));
    const uint64_t inUse = poolStats().bytesInUse;
    // Each refusal names the pointer it refused.
    auto refusedNaming = [](halError status, const void* pointer) {
        const std::string message = lastError();
        INFO(halGetErrorName(status) << ": " << message);
        CHECK(status == HAL_ERROR_INVALID_VALUE);
        CHECK_THAT(message, Catch::Contains(pointerText(pointer)));
    };

    void* interior = static_cast<unsigned char*>(block) + 512;
    refusedNaming(halFreeAsync(interior, stream), interior);
    refusedNaming(halFree(interior), interior);
    int local = 0;
    refusedNaming(halFreeAsync(&local, stream), &local);
    refusedNaming(halFree(&local), &local);
    cts::HostMemory pinned(4 * kKiB);
    refusedNaming(halFreeAsync(pinned.get(), stream), pinned.get());
    refusedNaming(halFree(pinned.get()), pinned.get());
    CHECK_THAT(lastError(), Catch::Contains("halFreeHost"));  // says how to free it instead
    CHECK(poolStats().bytesInUse == inUse);

    HAL_REQUIRE_OK(halFreeAsync(block, stream));
    refusedNaming(halFreeAsync(block, stream), block);
    refusedNaming(halFree(block), block);
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
}

TEST_CASE("statistics count in-use, reserved and cached bytes", "[pool]") {
    startWithEmptyCache();
    constexpr size_t kSize = 100 * kKiB;  // a multiple of the pool's 512-byte granule
    cts::Stream stream;
    const halMemPoolStats before = poolStats();
    void* block = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&block, kSize, stream));
    const halMemPoolStats live = poolStats();
    CHECK(live.bytesInUse == before.bytesInUse + kSize);
    CHECK(live.peakBytesInUse >= live.bytesInUse);
    CHECK(live.bytesReserved >= live.bytesInUse);
    CHECK(live.peakBytesReserved >= live.bytesReserved);
    CHECK(live.bytesCached == live.bytesReserved - live.bytesInUse);
    CHECK(live.newSegments + live.reusedSameStream + live.reusedProvenOrder +
              live.reusedObservedComplete + live.oomSynchronized ==
          before.newSegments + before.reusedSameStream + before.reusedProvenOrder +
              before.reusedObservedComplete + before.oomSynchronized + 1);

    HAL_REQUIRE_OK(halFreeAsync(block, stream));
    const halMemPoolStats freed = poolStats();
    CHECK(freed.bytesInUse == before.bytesInUse);
    CHECK(freed.bytesCached == freed.bytesReserved - freed.bytesInUse);
    void* again = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&again, kSize, stream));
    CHECK(again == block);
    CHECK(poolStats().reusedSameStream == freed.reusedSameStream + 1);
    HAL_REQUIRE_OK(halFreeAsync(again, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
}

TEST_CASE("halMemPoolGetStats fills the members that fit and validates its arguments", "[pool]") {
    const int device = currentDevice();
    int count = 0;
    HAL_REQUIRE_OK(halGetDeviceCount(&count));
    halMemPoolStats stats;
    std::memset(&stats, 0, sizeof stats);
    CHECK(halMemPoolGetStats(device, nullptr) == HAL_ERROR_INVALID_VALUE);
    stats.size = offsetof(halMemPoolStats, bytesInUse);  // too small for bytesInUse
    CHECK(halMemPoolGetStats(device, &stats) == HAL_ERROR_INVALID_VALUE);
    stats.size = sizeof stats;
    CHECK(halMemPoolGetStats(-1, &stats) == HAL_ERROR_INVALID_DEVICE);
    CHECK(halMemPoolGetStats(count, &stats) == HAL_ERROR_INVALID_DEVICE);

    // An older caller's smaller struct: nothing beyond it is written.
    struct OlderStats {
        size_t size;
        uint64_t bytesInUse;
        uint64_t canary;
    } older{offsetof(halMemPoolStats, peakBytesInUse), 0, 0x5A5A5A5A5A5A5A5Aull};
    HAL_REQUIRE_OK(halMemPoolGetStats(device, reinterpret_cast<halMemPoolStats*>(&older)));
    CHECK(older.size == offsetof(halMemPoolStats, peakBytesInUse));
    CHECK(older.canary == 0x5A5A5A5A5A5A5A5Aull);
}

TEST_CASE("halMemPoolTrim returns finished cached segments, keeping what is asked", "[pool]") {
    startWithEmptyCache();
    const halMemPoolStats empty = poolStats();
    cts::Stream stream;
    // Two segments' worth of 1 MiB blocks, all freed and finished.
    std::vector<void*> blocks(4);
    for (void*& block : blocks) block = allocateWritten(stream, 1 * kMiB);
    for (void* block : blocks) HAL_REQUIRE_OK(halFreeAsync(block, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    const halMemPoolStats cached = poolStats();
    REQUIRE(cached.bytesReserved >= empty.bytesReserved + 4 * kMiB);
    CHECK(cached.bytesCached == cached.bytesReserved - cached.bytesInUse);

    SECTION("down to nothing") {
        HAL_REQUIRE_OK(halMemPoolTrim(currentDevice(), 0));
        const halMemPoolStats trimmed = poolStats();
        CHECK(trimmed.bytesReserved == empty.bytesReserved);
        CHECK(trimmed.backendFrees > cached.backendFrees);
    }
    SECTION("keeping at least the bytes asked for") {
        const size_t keep = static_cast<size_t>(empty.bytesReserved) + 1;
        HAL_REQUIRE_OK(halMemPoolTrim(currentDevice(), keep));
        const halMemPoolStats trimmed = poolStats();
        CHECK(trimmed.bytesReserved >= keep);
        CHECK(trimmed.bytesReserved < cached.bytesReserved);
    }
    CHECK(halMemPoolTrim(-1, 0) == HAL_ERROR_INVALID_DEVICE);
}

TEST_CASE("halMemPoolTrim keeps memory unfinished work uses, without waiting for it", "[pool]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    startWithEmptyCache();
    const halMemPoolStats empty = poolStats();
    constexpr size_t kSize = 64 * kKiB;
    cts::Stream s0, s1;
    cts::HostMemory seen(kSize);
    cts::Gate gate;
    void* block = allocateWritten(s0, kSize);
    orderAfter(s0, s1);
    gate.enqueue(s1);
    HAL_REQUIRE_OK(halMemcpyAsync(seen.get(), kSize, block, kSize, HAL_MEMCPY_DEVICE_TO_HOST, s1));
    HAL_REQUIRE_OK(halFreeAsync(block, s0));
    HAL_REQUIRE_OK(halSynchronizeStream(s0));

    HAL_REQUIRE_OK(halMemPoolTrim(currentDevice(), 0));
    CHECK_FALSE(gate.finished());
    CHECK(poolStats().bytesReserved >= empty.bytesReserved + kSize);

    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(s1));
    CHECK(countDifferent(seen.get(), kSize, kOriginal) == 0);
    HAL_REQUIRE_OK(halMemPoolTrim(currentDevice(), 0));
    CHECK(poolStats().bytesReserved == empty.bytesReserved);
}

// Returning a segment to the device waits for no stream: the vendors' plain frees wait for the
// whole device (cuMemFree, clr's hipFree, and hipFreeAsync of memory not from a HIP memory pool),
// so a backend that calls one from the trim or the release threshold hangs here until the gate
// gives up. The stream is held after the block's work was submitted, so the case holds also where
// the two streams share a hardware queue.
TEST_CASE("segments return to the device while another stream is held by a host function",
          "[pool]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    startWithEmptyCache();
    const halMemPoolStats empty = poolStats();
    cts::Stream user, held;
    void* block = allocateWritten(user, 256 * kKiB);
    HAL_REQUIRE_OK(halFreeAsync(block, user));
    cts::Gate gate;
    gate.enqueue(held);
    SECTION("halMemPoolTrim") {
        HAL_REQUIRE_OK(halSynchronizeStream(user));
        HAL_REQUIRE_OK(halMemPoolTrim(currentDevice(), 0));
    }
    SECTION("the release threshold, at a synchronisation of the stream that freed") {
        AttributeOverride releaseEverything(HAL_MEMPOOL_ATTR_RELEASE_THRESHOLD, 0);
        HAL_REQUIRE_OK(halSynchronizeStream(user));
    }
    CHECK(poolStats().bytesReserved == empty.bytesReserved);
    CHECK_FALSE(gate.finished());
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(held));
    CHECK_FALSE(gate.timedOut());
}

TEST_CASE("above the release threshold, a host synchronisation returns cached segments", "[pool]") {
    startWithEmptyCache();
    const halMemPoolStats empty = poolStats();
    AttributeOverride releaseEverything(HAL_MEMPOOL_ATTR_RELEASE_THRESHOLD, 0);
    cts::Stream stream;
    void* block = allocateWritten(stream, 256 * kKiB);
    HAL_REQUIRE_OK(halFreeAsync(block, stream));
    CHECK(poolStats().bytesReserved > empty.bytesReserved);  // cached until the host waits
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(poolStats().bytesReserved == empty.bytesReserved);
}

TEST_CASE("pool attributes can be read and changed, and invalid values are refused", "[pool]") {
    const int device = currentDevice();
    int count = 0;
    HAL_REQUIRE_OK(halGetDeviceCount(&count));
    uint64_t value = 0;
    // The documented defaults (every case restores what it changes).
    HAL_REQUIRE_OK(halMemPoolGetAttribute(device, HAL_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value));
    CHECK(value == UINT64_MAX);
    HAL_REQUIRE_OK(halMemPoolGetAttribute(device, HAL_MEMPOOL_ATTR_REUSE_PROVEN_ORDER, &value));
    CHECK(value == 1);
    HAL_REQUIRE_OK(
        halMemPoolGetAttribute(device, HAL_MEMPOOL_ATTR_REUSE_OBSERVED_COMPLETION, &value));
    CHECK(value == 1);

    {
        AttributeOverride threshold(HAL_MEMPOOL_ATTR_RELEASE_THRESHOLD, 64 * kMiB);
        AttributeOverride proven(HAL_MEMPOOL_ATTR_REUSE_PROVEN_ORDER, 0);
        AttributeOverride observed(HAL_MEMPOOL_ATTR_REUSE_OBSERVED_COMPLETION, 0);
        HAL_REQUIRE_OK(halMemPoolGetAttribute(device, HAL_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value));
        CHECK(value == 64 * kMiB);
        HAL_REQUIRE_OK(halMemPoolGetAttribute(device, HAL_MEMPOOL_ATTR_REUSE_PROVEN_ORDER, &value));
        CHECK(value == 0);
        HAL_REQUIRE_OK(
            halMemPoolGetAttribute(device, HAL_MEMPOOL_ATTR_REUSE_OBSERVED_COMPLETION, &value));
        CHECK(value == 0);

        // A switch takes 0 or 1; a refused value leaves the attribute as it was.
        CHECK(halMemPoolSetAttribute(device, HAL_MEMPOOL_ATTR_REUSE_PROVEN_ORDER, 2) ==
              HAL_ERROR_INVALID_VALUE);
        CHECK(halMemPoolSetAttribute(device, HAL_MEMPOOL_ATTR_REUSE_OBSERVED_COMPLETION, 7) ==
              HAL_ERROR_INVALID_VALUE);
        HAL_REQUIRE_OK(halMemPoolGetAttribute(device, HAL_MEMPOOL_ATTR_REUSE_PROVEN_ORDER, &value));
        CHECK(value == 0);
    }
    HAL_REQUIRE_OK(halMemPoolGetAttribute(device, HAL_MEMPOOL_ATTR_REUSE_PROVEN_ORDER, &value));
    CHECK(value == 1);

    const auto unknown = static_cast<halMemPoolAttribute>(99);
    CHECK(halMemPoolSetAttribute(device, unknown, 0) == HAL_ERROR_INVALID_VALUE);
    CHECK(halMemPoolGetAttribute(device, unknown, &value) == HAL_ERROR_INVALID_VALUE);
    CHECK(halMemPoolGetAttribute(device, HAL_MEMPOOL_ATTR_RELEASE_THRESHOLD, nullptr) ==
          HAL_ERROR_INVALID_VALUE);
    CHECK(halMemPoolSetAttribute(-1, HAL_MEMPOOL_ATTR_RELEASE_THRESHOLD, 0) ==
          HAL_ERROR_INVALID_DEVICE);
    CHECK(halMemPoolGetAttribute(count, HAL_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value) ==
          HAL_ERROR_INVALID_DEVICE);
}

// ---- Exhaustion (the cts.cpu.oom run makes the CPU device small) ----------------------------

TEST_CASE("out of memory: blocks awaiting another stream's use are reclaimed before failing",
          "[pool][oom]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    if (tooLargeToExhaust()) return;
    startWithEmptyCache();
    cts::Stream s0, s1;
    std::vector<void*> blocks = fillDevice(s0);

    // s1 uses every block behind a gate; the host frees them all on s0 meanwhile.
    cts::Gate gate;
    std::atomic<bool> usesDone{false};
    orderAfter(s0, s1);
    gate.enqueue(s1);
    for (void* block : blocks) HAL_REQUIRE_OK(halMemsetAsync(block, kFillBlock, 0, 1, s1));
    cts::enqueueSet(s1, &usesDone);
    for (void* block : blocks) HAL_REQUIRE_OK(halFreeAsync(block, s0));
    CHECK(poolStats().bytesPending >= blocks.size() * kFillBlock);

    // The uses finish, but nothing tells polyhal: only the reclaim path can find out.
    gate.open();
    REQUIRE(cts::waitUntil([&] { return usesDone.load(); }));
    const halMemPoolStats before = poolStats();
    void* block = nullptr;
    SECTION("a request the pending blocks can serve, with observed completion off") {
        // No pool event is queried before the reclaim path: it must synchronise.
        AttributeOverride noObservation(HAL_MEMPOOL_ATTR_REUSE_OBSERVED_COMPLETION, 0);
        HAL_REQUIRE_OK(halMallocAsync(&block, kFillBlock, s0));
        CHECK(std::find(blocks.begin(), blocks.end(), block) != blocks.end());
    }
    SECTION("a request only segments returned to the device can serve") {
        constexpr size_t kLarge = 4 * kMiB;  // larger than any freed block
        HAL_REQUIRE_OK(halMallocAsync(&block, kLarge, s0));
        CHECK(poolStats().backendFrees > before.backendFrees);
    }
    CHECK(poolStats().oomSynchronized == before.oomSynchronized + 1);
    HAL_REQUIRE_OK(halFreeAsync(block, s0));
    HAL_REQUIRE_OK(halSynchronizeStream(s0));
}

TEST_CASE("out of memory: the error says what was requested and where the memory is",
          "[pool][oom]") {
    if (tooLargeToExhaust()) return;
    startWithEmptyCache();
    cts::Stream stream;
    std::vector<void*> blocks = fillDevice(stream);
    HAL_REQUIRE_OK(halFreeAsync(blocks.back(), stream));  // leaves one free block
    blocks.pop_back();

    const halMemPoolStats before = poolStats();
    constexpr size_t kRequest = kFillBlock + kFillBlock / 2;  // more than the free block
    void* block = nullptr;
    REQUIRE(halMallocAsync(&block, kRequest, stream) == HAL_ERROR_OUT_OF_MEMORY);
    const std::string message = lastError();
    CHECK(block == nullptr);
    const halMemPoolStats after = poolStats();
    INFO(message);
    CHECK_THAT(message, Catch::Contains("requested") && Catch::Contains(std::to_string(kRequest)));
    CHECK_THAT(message,
               Catch::Contains("in use") && Catch::Contains(std::to_string(after.bytesInUse)));
    CHECK_THAT(message,
               Catch::Contains("reserved") && Catch::Contains(std::to_string(after.bytesReserved)));
    CHECK_THAT(message,
               Catch::Contains("largest free") && Catch::Contains(std::to_string(kFillBlock)));
    CHECK(after.oomSynchronized == before.oomSynchronized);

    // The pool still works.
    HAL_REQUIRE_OK(halMallocAsync(&block, kFillBlock, stream));
    blocks.push_back(block);
    for (void* live : blocks) HAL_REQUIRE_OK(halFreeAsync(live, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
}
