// Randomised stress of the stream-aware pool. Host threads share a few streams and, at random,
// allocate blocks of random sizes, use them on other streams (reads, rewrites, copies into
// temporary blocks), order streams with events, observe completion and free blocks on any
// stream, ordered or not. Every block carries its identity (an 8-byte id, then a fill byte
// derived from it); every use copies the block back in stream order, and the copies are checked
// once the streams are synchronised. Memory handed to new work while an earlier use still
// needed it shows up as another block's identity: the suite requires zero corruption.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cts.hpp"

namespace {

constexpr int kThreads = 4;
constexpr int kRounds = 16;  // each ends with a synchronisation and the checks
constexpr int kStepsPerRound = 40;
constexpr size_t kMaxLiveBlocks = 24;  // per thread
constexpr size_t kHeader = sizeof(uint64_t);
constexpr uint64_t kDefaultSeed = 0x9E3779B97F4A7C15ull;

unsigned char fillByte(uint64_t id) {
    return static_cast<unsigned char>((id * 0x9Eu) % 251 + 1);
}

// The seed of thread 0 (thread t uses seed + t): POLYHAL_CTS_SEED when set, to replay a run.
uint64_t baseSeed() {
    const char* text = std::getenv("POLYHAL_CTS_SEED");
    return text != nullptr && *text != '\0' ? std::strtoull(text, nullptr, 0) : kDefaultSeed;
}

struct Block {
    unsigned char* ptr;
    size_t size;
    uint64_t id;
    halStream last;  // the stream of the latest use: every use is ordered after the previous one
};

// A copy of a block taken by a use, and whose block it should show.
struct Snapshot {
    uint64_t expectedId;
    std::vector<unsigned char> bytes;
};

// What one thread did and found. Only the thread writes it; the test reads it after joining.
struct Report {
    uint64_t seed = 0;
    uint64_t steps = 0;
    uint64_t checks = 0;
    uint64_t corrupt = 0;
    uint64_t failedCalls = 0;
    std::vector<std::string> problems;  // the first few, for the failure report

    void note(const std::string& problem) {
        if (problems.size() < 8) problems.push_back(problem);
    }
};

class Worker {
  public:
    Worker(int index, uint64_t seed, const std::vector<halStream>& streams, Report& report)
        : index_(index), random_(seed), streams_(streams), report_(report) {
        report_.seed = seed;
    }

    void run(int device) {
        if (!ok(halSetDevice(device), "halSetDevice")) return;
        for (halEvent& event : events_) {
            if (!ok(halCreateEventWithFlag(&event, HAL_EVENT_DISABLE_TIMING), "create event")) {
                return;
            }
        }
        for (int round = 0; round < kRounds; ++round) {
            for (int step = 0; step < kStepsPerRound; ++step) {
                takeStep();
                ++report_.steps;
            }
            checkSnapshots();
        }
        while (!live_.empty()) freeBlock(live_.size() - 1);
        checkSnapshots();
        for (halEvent event : events_) {
            if (event != nullptr) halDestroyEvent(event);
        }
    }

  private:
    void takeStep() {
        const unsigned choice = pick(100);
        if (live_.empty() || (choice < 30 && live_.size() < kMaxLiveBlocks)) {
            allocate();
        } else if (choice < 50) {
            read(pick(live_.size()));
        } else if (choice < 60) {
            rewrite(pick(live_.size()));
        } else if (choice < 70) {
            copyThroughTemporary(pick(live_.size()));
        } else if (choice < 85) {
            freeBlock(pick(live_.size()));
        } else if (choice < 95) {
            orderAfter(anyStream(), anyStream());
        } else {
            // Let the pool observe completion without waiting.
            const halError status = halQueryStream(anyStream());
            if (status != HAL_ERROR_NOT_READY) ok(status, "halQueryStream");
        }
    }

    // Mostly small blocks of every size class, sometimes a large one.
    size_t randomSize() {
        if (pick(32) == 0) return (3u << 19) + pick(3u << 19);  // 1.5 .. 3 MiB
        const unsigned bits = 4 + pick(15);                     // 16 B .. 512 KiB
        return (size_t{1} << bits) + pick(1u << bits);
    }

    void allocate() {
        const size_t size = randomSize();
        const halStream stream = anyStream();
        void* ptr = nullptr;
        if (!ok(halMallocAsync(&ptr, size, stream), "halMallocAsync")) return;
        const Block block{static_cast<unsigned char*>(ptr), size, nextId(), stream};
        ids_.push_back(block.id);  // the copy reads it later; a deque keeps it in place
        ok(halMemcpyAsync(block.ptr, size, &ids_.back(), kHeader, HAL_MEMCPY_HOST_TO_DEVICE,
                          stream),
           "write id");
        ok(halMemsetAsync(block.ptr + kHeader, size - kHeader, fillByte(block.id), size - kHeader,
                          stream),
           "write fill");
        live_.push_back(block);
    }

    void read(size_t index) {
        Block& block = live_[index];
        const halStream user = useOn(block);
        snapshot(block.ptr, block.size, block.id, user);
    }

    // A use that writes: the same contents again, from another stream.
    void rewrite(size_t index) {
        Block& block = live_[index];
        const halStream user = useOn(block);
        ok(halMemsetAsync(block.ptr + kHeader, block.size - kHeader, fillByte(block.id),
                          block.size - kHeader, user),
           "rewrite");
    }

    // Copies the block into a temporary block on another stream, checks the temporary, and
    // frees it on a random stream that nothing orders after the copy.
    void copyThroughTemporary(size_t index) {
        Block& block = live_[index];
        const halStream user = useOn(block);
        void* temporary = nullptr;
        if (!ok(halMallocAsync(&temporary, block.size, user), "halMallocAsync temporary")) return;
        ok(halMemcpyAsync(temporary, block.size, block.ptr, block.size, HAL_MEMCPY_DEVICE_TO_DEVICE,
                          user),
           "copy to temporary");
        snapshot(temporary, block.size, block.id, user);
        ok(halFreeAsync(temporary, anyStream()), "halFreeAsync temporary");
    }

    // Frees on a random stream: half the time ordered after the last use (flow back), half the
    // time not ordered at all (the pool must keep the block until it is).
    void freeBlock(size_t index) {
        const Block block = live_[index];
        live_[index] = live_.back();
        live_.pop_back();
        const halStream stream = anyStream();
        if (pick(2) == 0) orderAfter(block.last, stream);
        ok(halFreeAsync(block.ptr, stream), "halFreeAsync");
    }

    // Picks the stream of the next use and orders it after the block's previous use.
    halStream useOn(Block& block) {
        const halStream user = anyStream();
        orderAfter(block.last, user);
        block.last = user;
        return user;
    }

    void orderAfter(halStream earlier, halStream later) {
        if (earlier == later) return;
        // Re-recording an event does not move waits already enqueued on it.
        const halEvent event = events_[nextEvent_++ % events_.size()];
        if (ok(halRecordEvent(event, earlier), "halRecordEvent")) {
            ok(halStreamWaitEvent(later, event), "halStreamWaitEvent");
        }
    }

    void snapshot(const void* ptr, size_t size, uint64_t expectedId, halStream stream) {
        snapshots_.push_back({expectedId, std::vector<unsigned char>(size)});
        ok(halMemcpyAsync(snapshots_.back().bytes.data(), size, ptr, size,
                          HAL_MEMCPY_DEVICE_TO_HOST, stream),
           "snapshot");
    }

    void checkSnapshots() {
        for (halStream stream : streams_) ok(halSynchronizeStream(stream), "halSynchronizeStream");
        for (const Snapshot& snapshot : snapshots_) {
            ++report_.checks;
            uint64_t id = 0;
            std::memcpy(&id, snapshot.bytes.data(), kHeader);
            const unsigned char fill = fillByte(snapshot.expectedId);
            size_t wrong = 0;
            for (size_t i = kHeader; i < snapshot.bytes.size(); ++i) {
                wrong += snapshot.bytes[i] != fill;
            }
            if (id == snapshot.expectedId && wrong == 0) continue;
            ++report_.corrupt;
            char problem[160];
            std::snprintf(problem, sizeof problem,
                          "thread %d: block %#" PRIx64 " (%zu bytes) showed id %#" PRIx64
                          " and %zu wrong fill bytes",
                          index_, snapshot.expectedId, snapshot.bytes.size(), id, wrong);
            report_.note(problem);
        }
        snapshots_.clear();
    }

    bool ok(halError status, const char* what) {
        if (status == HAL_SUCCESS) return true;
        ++report_.failedCalls;
        report_.note(std::string("thread ") + std::to_string(index_) + ": " + what + ": " +
                     halGetErrorName(status) + ": " + halGetLastErrorMessage());
        return false;
    }

    unsigned pick(size_t bound) {
        return static_cast<unsigned>(std::uniform_int_distribution<size_t>(0, bound - 1)(random_));
    }
    halStream anyStream() { return streams_[pick(streams_.size())]; }
    uint64_t nextId() { return (static_cast<uint64_t>(index_ + 1) << 32) | ++blocksMade_; }

    const int index_;
    std::mt19937_64 random_;
    const std::vector<halStream>& streams_;
    Report& report_;
    std::vector<halEvent> events_ = std::vector<halEvent>(4, nullptr);
    size_t nextEvent_ = 0;
    uint64_t blocksMade_ = 0;
    std::vector<Block> live_;
    std::deque<uint64_t> ids_;
    std::deque<Snapshot> snapshots_;
};

}  // namespace

TEST_CASE(
    "stress: threads allocating, sharing and freeing blocks across streams never see "
    "another block's data",
    "[pool][stress]") {
    cts::Stream s1, s2, s3;
    // The default stream takes part too.
    const std::vector<halStream> streams{nullptr, s1.get(), s2.get(), s3.get()};
    halMemPoolStats before;
    std::memset(&before, 0, sizeof before);
    before.size = sizeof before;
    int device = 0;
    HAL_REQUIRE_OK(halGetDevice(&device));
    HAL_REQUIRE_OK(halMemPoolGetStats(device, &before));

    const uint64_t seed = baseSeed();
    std::printf("pool stress: %d threads, seed %#" PRIx64
                " (thread t uses seed + t; "
                "POLYHAL_CTS_SEED replays it)\n",
                kThreads, seed);
    std::vector<Report> reports(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            Worker(t, seed + static_cast<uint64_t>(t), streams, reports[t]).run(device);
        });
    }
    for (std::thread& thread : threads) thread.join();

    halMemPoolStats after = before;
    HAL_REQUIRE_OK(halMemPoolGetStats(device, &after));
    std::printf("pool stress: reuse same stream %" PRIu64 ", proven order %" PRIu64
                ", observed complete %" PRIu64 ", new segments %" PRIu64 "\n",
                after.reusedSameStream - before.reusedSameStream,
                after.reusedProvenOrder - before.reusedProvenOrder,
                after.reusedObservedComplete - before.reusedObservedComplete,
                after.newSegments - before.newSegments);
    for (const Report& report : reports) {
        std::string problems;
        for (const std::string& problem : report.problems) problems += "\n  " + problem;
        INFO("seed 0x" << std::hex << report.seed << std::dec << ": " << report.steps << " steps, "
                       << report.checks << " checks" << problems);
        CHECK(report.failedCalls == 0);
        CHECK(report.corrupt == 0);
        CHECK(report.checks > 0);
    }
    CHECK(after.bytesInUse == before.bytesInUse);
    // The run went through every way the pool reuses memory across streams.
    CHECK(after.reusedSameStream > before.reusedSameStream);
    CHECK(after.reusedProvenOrder > before.reusedProvenOrder);
    CHECK(after.reusedObservedComplete > before.reusedObservedComplete);
}
