// Streams: ordering, concurrency, priorities and destruction with work pending.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "backend_fixture.hpp"

using namespace cpu_tests;

namespace {

struct Appender {
    std::vector<int>* log;
    int value;
};

void append(void* data) {
    const Appender& appender = *static_cast<Appender*>(data);
    appender.log->push_back(appender.value);
}

void increment(void* counter) {
    static_cast<std::atomic<int>*>(counter)->fetch_add(1);
}

// Waits (up to a deadline) for a flag another stream sets.
struct Handshake {
    std::atomic<bool> flag{false};
    std::atomic<bool> sawFlag{false};
};

void waitForFlag(void* data) {
    Handshake& handshake = *static_cast<Handshake*>(data);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!handshake.flag.load() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
    }
    handshake.sawFlag.store(handshake.flag.load());
}

void setFlag(void* data) {
    static_cast<Handshake*>(data)->flag.store(true);
}

int currentThreadNice() {
    return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
}

void storeNice(void* nice) {
    *static_cast<int*>(nice) = currentThreadNice();
}

void throwFromHostFunction(void*) {
    throw std::runtime_error("host function failure");
}

}  // namespace

TEST_CASE("a stream runs its host functions in submission order", "[stream]") {
    Stream stream;
    std::vector<int> log;
    std::vector<Appender> appenders;
    for (int i = 0; i < 5000; ++i) appenders.push_back(Appender{&log, i});
    for (Appender& appender : appenders) {
        REQUIRE(backend().launchHostFunc(stream.get(), append, &appender) == HAL_SUCCESS);
    }
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    REQUIRE(log.size() == appenders.size());
    CHECK(std::is_sorted(log.begin(), log.end()));
}

TEST_CASE("memset, memcpy and host functions run in stream order", "[stream]") {
    Stream stream;
    constexpr size_t kBytes = 1 << 20;
    std::vector<unsigned char> source(kBytes, 0);
    std::vector<unsigned char> target(kBytes, 0);
    struct Check {
        std::vector<unsigned char>* target;
        bool allSet = false;
    } check{&target};
    REQUIRE(backend().memsetAsync(stream.get(), source.data(), 0xab, kBytes) == HAL_SUCCESS);
    REQUIRE(backend().memcpyAsync(stream.get(), target.data(), source.data(), kBytes,
                                  HAL_MEMCPY_HOST_TO_HOST) == HAL_SUCCESS);
    REQUIRE(backend().launchHostFunc(
                stream.get(),
                [](void* data) {
                    auto& c = *static_cast<Check*>(data);
                    c.allSet = std::all_of(c.target->begin(), c.target->end(),
                                           [](unsigned char b) { return b == 0xab; });
                },
                &check) == HAL_SUCCESS);
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    CHECK(check.allSet);
}

TEST_CASE("two streams run concurrently", "[stream]") {
    // The host function on A only finishes once B's host function has run: with A and B
    // sharing one thread, or B waiting for A, this would never complete.
    Stream a;
    Stream b;
    Handshake handshake;
    REQUIRE(backend().launchHostFunc(a.get(), waitForFlag, &handshake) == HAL_SUCCESS);
    REQUIRE(backend().launchHostFunc(b.get(), setFlag, &handshake) == HAL_SUCCESS);
    REQUIRE(backend().streamSynchronize(a.get()) == HAL_SUCCESS);
    REQUIRE(backend().streamSynchronize(b.get()) == HAL_SUCCESS);
    CHECK(handshake.sawFlag.load());
}

TEST_CASE("streamQuery reports pending work without waiting for it", "[stream]") {
    Stream stream;
    Gate gate;
    CHECK(backend().streamQuery(stream.get()) == HAL_SUCCESS);
    REQUIRE(backend().launchHostFunc(stream.get(), Gate::wait, &gate) == HAL_SUCCESS);
    CHECK(backend().streamQuery(stream.get()) == HAL_ERROR_NOT_READY);
    gate.open();
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    CHECK(backend().streamQuery(stream.get()) == HAL_SUCCESS);
    CHECK_FALSE(gate.timedOut());
}

TEST_CASE("destroying a stream returns at once and its pending work still runs", "[stream]") {
    Gate gate;
    std::atomic<int> ran{0};
    Event done;
    {
        Stream stream;
        REQUIRE(backend().launchHostFunc(stream.get(), Gate::wait, &gate) == HAL_SUCCESS);
        REQUIRE(backend().launchHostFunc(stream.get(), increment, &ran) == HAL_SUCCESS);
        REQUIRE(backend().eventRecord(done.get(), stream.get()) == HAL_SUCCESS);
        // Returns while the gate is still closed: had it waited for the work, the gate would
        // have timed out first.
        stream.destroy();
    }
    CHECK(backend().eventQuery(done.get()) == HAL_ERROR_NOT_READY);
    gate.open();
    // The event outlives the stream it was recorded on.
    REQUIRE(backend().eventSynchronize(done.get()) == HAL_SUCCESS);
    CHECK(ran.load() == 1);
    CHECK_FALSE(gate.timedOut());
}

TEST_CASE("streams can be created and destroyed many times", "[stream]") {
    std::atomic<int> ran{0};
    for (int i = 0; i < 300; ++i) {
        Stream stream;
        REQUIRE(backend().launchHostFunc(stream.get(), increment, &ran) == HAL_SUCCESS);
    }
    REQUIRE(backend().deviceSynchronize(device0()) == HAL_SUCCESS);
    CHECK(ran.load() == 300);
}

TEST_CASE("submissions from many threads to one stream all run, each thread's in order",
          "[stream]") {
    Stream stream;
    constexpr int kThreads = 4;
    constexpr int kPerThread = 1000;
    std::vector<std::vector<int>> logs(kThreads);
    std::vector<std::vector<Appender>> appenders(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        for (int i = 0; i < kPerThread; ++i) appenders[t].push_back(Appender{&logs[t], i});
    }
    std::vector<std::thread> submitters;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
        submitters.emplace_back([&, t] {
            for (Appender& appender : appenders[t]) {
                if (backend().launchHostFunc(stream.get(), append, &appender) != HAL_SUCCESS) {
                    ++failures;
                }
            }
        });
    }
    for (std::thread& submitter : submitters) submitter.join();
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    CHECK(failures.load() == 0);
    for (const std::vector<int>& log : logs) {
        CHECK(log.size() == size_t{kPerThread});
        CHECK(std::is_sorted(log.begin(), log.end()));
    }
}

TEST_CASE("a less urgent stream's worker runs with a higher nice value", "[stream]") {
    Stream urgent(-2);
    Stream relaxed(0);
    int urgentNice = 100;
    int relaxedNice = 100;
    REQUIRE(backend().launchHostFunc(urgent.get(), storeNice, &urgentNice) == HAL_SUCCESS);
    REQUIRE(backend().launchHostFunc(relaxed.get(), storeNice, &relaxedNice) == HAL_SUCCESS);
    REQUIRE(backend().streamSynchronize(urgent.get()) == HAL_SUCCESS);
    REQUIRE(backend().streamSynchronize(relaxed.get()) == HAL_SUCCESS);
    CHECK(urgentNice == currentThreadNice());
    CHECK(relaxedNice == std::min(urgentNice + 2, 19));
}

TEST_CASE("a host function that throws fails the stream instead of the process", "[stream]") {
    Stream stream;
    std::atomic<int> ran{0};
    REQUIRE(backend().launchHostFunc(stream.get(), throwFromHostFunction, nullptr) == HAL_SUCCESS);
    REQUIRE(backend().launchHostFunc(stream.get(), increment, &ran) == HAL_SUCCESS);
    CHECK(backend().streamSynchronize(stream.get()) == HAL_ERROR_LAUNCH_FAILED);
    CHECK_THAT(lastError(), Catch::Contains("host function threw"));
    CHECK(ran.load() == 1);  // later work still runs
    CHECK(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
}

TEST_CASE("the native handle identifies the stream", "[stream]") {
    Stream a;
    Stream b;
    void* nativeA = nullptr;
    void* nativeB = nullptr;
    REQUIRE(backend().streamGetNativeHandle(a.get(), &nativeA) == HAL_SUCCESS);
    REQUIRE(backend().streamGetNativeHandle(b.get(), &nativeB) == HAL_SUCCESS);
    CHECK(nativeA != nullptr);
    CHECK(nativeA != nativeB);
}
