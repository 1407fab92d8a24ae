// Hot paths of the core and the CPU backend:
// - dispatch overhead: a public call against the same plugin entry called directly;
// - submit-to-completion latency of an empty host function, public and through the plugin entries
//   alone, against a bare futex ping-pong;
// - event record + query;
// - copy bandwidth of halMemcpy against plain memcpy;
// - a pitched copy with halMemcpy2DAsync against one halMemcpyAsync per row (what the core does for
//   a backend without memcpy3DAsync) and against a plain memcpy loop;
// - the same calls while a trace is written (to /dev/null, uncapped), against the untraced ones
//   above: the per-call cost of tracing.
#include <benchmark/benchmark.h>
#include <linux/futex.h>
#include <polyhal/hal.h>
#include <polyhal/plugin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "cpu_backend.h"

namespace {

void check(halError status, const char* what) {
    if (status != HAL_SUCCESS) {
        std::fprintf(stderr, "%s: %s: %s\n", what, halGetErrorName(status),
                     halGetLastErrorMessage());
        std::abort();
    }
}

// A second instance of the CPU backend, called without the core in between.
struct DirectCpuBackend {
    halPluginDispatchTable table{};
    halPluginDevice device = nullptr;
    halPluginStream stream = nullptr;
    halPluginEvent event = nullptr;

    DirectCpuBackend() {
        static const halPluginHost host = {sizeof(halPluginHost), HAL_PLUGIN_ABI_VERSION,
                                           [](halLogLevel, const char*) {},
                                           [](halLogLevel) { return 0; }, [](const char*) {}};
        table.size = sizeof table;
        check(polyhalCpuGetDispatchTable(HAL_PLUGIN_ABI_VERSION, &host, &table), "entry");
        check(table.initialize(), "initialize");
        check(table.deviceOpen(0, &device), "deviceOpen");
        check(table.streamCreate(device, 0, 0, &stream), "streamCreate");
        check(table.eventCreate(device, HAL_EVENT_DISABLE_TIMING, &event), "eventCreate");
    }
};

DirectCpuBackend& direct() {
    static DirectCpuBackend* backend = new DirectCpuBackend();
    return *backend;
}

void BM_Dispatch_QueryStream_Public(benchmark::State& state) {
    halStream stream;
    check(halCreateStream(&stream), "halCreateStream");
    for (auto _ : state) benchmark::DoNotOptimize(halQueryStream(stream));
    check(halDestroyStream(stream), "halDestroyStream");
}
BENCHMARK(BM_Dispatch_QueryStream_Public);

void BM_Dispatch_QueryStream_Plugin(benchmark::State& state) {
    DirectCpuBackend& cpu = direct();
    for (auto _ : state) benchmark::DoNotOptimize(cpu.table.streamQuery(cpu.stream));
}
BENCHMARK(BM_Dispatch_QueryStream_Plugin);

void BM_Dispatch_QueryEvent_Public(benchmark::State& state) {
    halEvent event;
    check(halCreateEventWithFlag(&event, HAL_EVENT_DISABLE_TIMING), "halCreateEvent");
    for (auto _ : state) benchmark::DoNotOptimize(halQueryEvent(event));
    check(halDestroyEvent(event), "halDestroyEvent");
}
BENCHMARK(BM_Dispatch_QueryEvent_Public);

void BM_Dispatch_QueryEvent_Plugin(benchmark::State& state) {
    DirectCpuBackend& cpu = direct();
    for (auto _ : state) benchmark::DoNotOptimize(cpu.table.eventQuery(cpu.event));
}
BENCHMARK(BM_Dispatch_QueryEvent_Plugin);

void BM_EventRecordQuery_Public(benchmark::State& state) {
    halStream stream;
    halEvent event;
    check(halCreateStream(&stream), "halCreateStream");
    check(halCreateEventWithFlag(&event, HAL_EVENT_DISABLE_TIMING), "halCreateEvent");
    for (auto _ : state) {
        halRecordEvent(event, stream);
        benchmark::DoNotOptimize(halQueryEvent(event));
    }
    check(halSynchronizeStream(stream), "halSynchronizeStream");
    halDestroyEvent(event);
    halDestroyStream(stream);
}
BENCHMARK(BM_EventRecordQuery_Public);

void BM_EventRecordQuery_Plugin(benchmark::State& state) {
    DirectCpuBackend& cpu = direct();
    for (auto _ : state) {
        cpu.table.eventRecord(cpu.event, cpu.stream);
        benchmark::DoNotOptimize(cpu.table.eventQuery(cpu.event));
    }
    check(cpu.table.streamSynchronize(cpu.stream), "streamSynchronize");
}
BENCHMARK(BM_EventRecordQuery_Plugin);

void emptyHostFunction(void*) {}

// Submit an empty host function and wait for it: the round trip through the stream's worker.
void BM_HostFunctionRoundTrip(benchmark::State& state) {
    halStream stream;
    check(halCreateStream(&stream), "halCreateStream");
    for (auto _ : state) {
        halLaunchHostFunc(stream, emptyHostFunction, nullptr);
        halSynchronizeStream(stream);
    }
    halDestroyStream(stream);
}
BENCHMARK(BM_HostFunctionRoundTrip)->UseRealTime();

// The same round trip through the CPU backend's entries, without the core: what the core adds to
// the public one.
void BM_HostFunctionRoundTrip_Plugin(benchmark::State& state) {
    DirectCpuBackend& cpu = direct();
    for (auto _ : state) {
        cpu.table.launchHostFunc(cpu.stream, emptyHostFunction, nullptr);
        cpu.table.streamSynchronize(cpu.stream);
    }
}
BENCHMARK(BM_HostFunctionRoundTrip_Plugin)->UseRealTime();

long futex(std::atomic<uint32_t>* word, int op, uint32_t value) {
    return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op | FUTEX_PRIVATE_FLAG, value,
                   nullptr, nullptr, 0);
}

// The reference for the round trip: hand a token to another thread and back with bare futexes
// (the waiter sleeps in the kernel at once, no spinning).
void BM_FutexPingPong(benchmark::State& state) {
    std::atomic<uint32_t> turn{0};  // 0: main's turn, 1: partner's turn, 2: stop
    std::thread partner([&] {
        while (true) {
            uint32_t value;
            while ((value = turn.load(std::memory_order_acquire)) == 0) futex(&turn, FUTEX_WAIT, 0);
            if (value == 2) return;
            turn.store(0, std::memory_order_release);
            futex(&turn, FUTEX_WAKE, 1);
        }
    });
    for (auto _ : state) {
        turn.store(1, std::memory_order_release);
        futex(&turn, FUTEX_WAKE, 1);
        while (turn.load(std::memory_order_acquire) == 1) futex(&turn, FUTEX_WAIT, 1);
    }
    turn.store(2, std::memory_order_release);
    futex(&turn, FUTEX_WAKE, 1);
    partner.join();
}
BENCHMARK(BM_FutexPingPong)->UseRealTime();

// The same handoff when both sides spin briefly before sleeping, as the CPU backend does.
void BM_SpinThenFutexPingPong(benchmark::State& state) {
    std::atomic<uint32_t> turn{0};
    auto waitWhile = [&](uint32_t busy) {
        for (int spin = 0; spin < 4000; ++spin) {
            const uint32_t value = turn.load(std::memory_order_acquire);
            if (value != busy) return value;
        }
        uint32_t value;
        while ((value = turn.load(std::memory_order_acquire)) == busy)
            futex(&turn, FUTEX_WAIT, busy);
        return value;
    };
    std::thread partner([&] {
        while (waitWhile(0) != 2) {
            turn.store(0, std::memory_order_release);
            futex(&turn, FUTEX_WAKE, 1);
        }
    });
    for (auto _ : state) {
        turn.store(1, std::memory_order_release);
        futex(&turn, FUTEX_WAKE, 1);
        waitWhile(1);
    }
    turn.store(2, std::memory_order_release);
    futex(&turn, FUTEX_WAKE, 1);
    partner.join();
}
BENCHMARK(BM_SpinThenFutexPingPong)->UseRealTime();

// Enqueues on two streams ordered by events, each touching a pool block: the path checked mode's
// race detector instruments (run with POLYHAL_CHECK=races to measure it, unset for its cost off).
// Two 256-byte memsets per iteration, one per stream, each stream waiting for the other's last.
void BM_OrderedMemsetAsync_Public(benchmark::State& state) {
    halStream first, second;
    halEvent firstDone, secondDone;
    check(halCreateStream(&first), "halCreateStream");
    check(halCreateStream(&second), "halCreateStream");
    check(halCreateEventWithFlag(&firstDone, HAL_EVENT_DISABLE_TIMING), "halCreateEvent");
    check(halCreateEventWithFlag(&secondDone, HAL_EVENT_DISABLE_TIMING), "halCreateEvent");
    void* block;
    check(halMalloc(&block, 256), "halMalloc");
    uint64_t submitted = 0;
    for (auto _ : state) {
        halMemsetAsync(block, 256, 1, 256, first);
        halRecordEvent(firstDone, first);
        halStreamWaitEvent(second, firstDone);
        halMemsetAsync(block, 256, 2, 256, second);
        halRecordEvent(secondDone, second);
        halStreamWaitEvent(first, secondDone);
        if (++submitted % 256 == 0) halSynchronizeStream(first);  // keep the queues short
    }
    check(halSynchronizeDevice(), "halSynchronizeDevice");
    halFree(block);
    halDestroyEvent(firstDone);
    halDestroyEvent(secondDone);
    halDestroyStream(first);
    halDestroyStream(second);
}
BENCHMARK(BM_OrderedMemsetAsync_Public);

void BM_Memcpy_Public(benchmark::State& state) {
    const size_t bytes = static_cast<size_t>(state.range(0));
    void* src;
    void* dst;
    check(halMalloc(&src, bytes), "halMalloc");
    check(halMalloc(&dst, bytes), "halMalloc");
    check(halMemset(src, bytes, 1, bytes), "halMemset");
    for (auto _ : state) halMemcpy(dst, bytes, src, bytes, HAL_MEMCPY_DEVICE_TO_DEVICE);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes);
    halFree(src);
    halFree(dst);
}
BENCHMARK(BM_Memcpy_Public)->Arg(4 << 10)->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();

void BM_Memcpy_Plain(benchmark::State& state) {
    const size_t bytes = static_cast<size_t>(state.range(0));
    std::vector<char> src(bytes, 1), dst(bytes);
    for (auto _ : state) {
        std::memcpy(dst.data(), src.data(), bytes);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes);
}
BENCHMARK(BM_Memcpy_Plain)->Arg(4 << 10)->Arg(1 << 20)->Arg(64 << 20)->UseRealTime();

// A 1024 x 1024-byte window of a 2048-byte-pitch image, to a buffer of 1536-byte pitch.
constexpr size_t kRowBytes = 1024, kRows = 1024, kSrcPitch = 2048, kDstPitch = 1536;

struct PitchedBuffers {
    void* src = nullptr;
    void* dst = nullptr;
    PitchedBuffers() {
        check(halMalloc(&src, kSrcPitch * kRows), "halMalloc");
        check(halMalloc(&dst, kDstPitch * kRows), "halMalloc");
        check(halMemset(src, kSrcPitch * kRows, 1, kSrcPitch * kRows), "halMemset");
    }
    ~PitchedBuffers() {
        halFree(src);
        halFree(dst);
    }
};

void BM_Pitched_Memcpy2D(benchmark::State& state) {
    PitchedBuffers buffers;
    halStream stream = nullptr;
    check(halCreateStream(&stream), "halCreateStream");
    for (auto _ : state) {
        check(halMemcpy2DAsync(buffers.dst, kDstPitch, buffers.src, kSrcPitch, kRowBytes, kRows,
                               HAL_MEMCPY_DEVICE_TO_DEVICE, stream),
              "halMemcpy2DAsync");
        check(halSynchronizeStream(stream), "halSynchronizeStream");
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kRowBytes * kRows));
    halDestroyStream(stream);
}
BENCHMARK(BM_Pitched_Memcpy2D)->UseRealTime();

void BM_Pitched_RowCopies(benchmark::State& state) {
    PitchedBuffers buffers;
    halStream stream = nullptr;
    check(halCreateStream(&stream), "halCreateStream");
    auto* dst = static_cast<char*>(buffers.dst);
    const auto* src = static_cast<const char*>(buffers.src);
    for (auto _ : state) {
        for (size_t row = 0; row < kRows; ++row) {
            check(halMemcpyAsync(dst + row * kDstPitch, kRowBytes, src + row * kSrcPitch, kRowBytes,
                                 HAL_MEMCPY_DEVICE_TO_DEVICE, stream),
                  "halMemcpyAsync");
        }
        check(halSynchronizeStream(stream), "halSynchronizeStream");
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kRowBytes * kRows));
    halDestroyStream(stream);
}
BENCHMARK(BM_Pitched_RowCopies)->UseRealTime();

void BM_Pitched_Plain(benchmark::State& state) {
    std::vector<char> src(kSrcPitch * kRows, 1), dst(kDstPitch * kRows);
    for (auto _ : state) {
        for (size_t row = 0; row < kRows; ++row) {
            std::memcpy(dst.data() + row * kDstPitch, src.data() + row * kSrcPitch, kRowBytes);
        }
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kRowBytes * kRows));
}
BENCHMARK(BM_Pitched_Plain)->UseRealTime();

// Runs `body` while a trace is written to /dev/null with no cap on its records, so that the
// writer formats every record as it would for a file.
template <typename Body>
void whileTracing(benchmark::State& state, Body&& body) {
    setenv("POLYHAL_TRACE_MAX_EVENTS", "1000000000000", 1);
    check(halTraceStart("/dev/null"), "halTraceStart");
    unsetenv("POLYHAL_TRACE_MAX_EVENTS");
    body(state);
    check(halTraceStop(), "halTraceStop");
}

void BM_Traced_QueryStream(benchmark::State& state) {
    whileTracing(state, BM_Dispatch_QueryStream_Public);
}
BENCHMARK(BM_Traced_QueryStream);

void BM_Traced_EventRecordQuery(benchmark::State& state) {
    whileTracing(state, BM_EventRecordQuery_Public);
}
BENCHMARK(BM_Traced_EventRecordQuery)->UseRealTime();

void BM_Traced_RangePushPop(benchmark::State& state) {
    whileTracing(state, [](benchmark::State& s) {
        for (auto _ : s) {
            halTraceRangePush("step");
            halTraceRangePop();
        }
    });
}
BENCHMARK(BM_Traced_RangePushPop);

void BM_Untraced_RangePushPop(benchmark::State& state) {
    for (auto _ : state) {
        halTraceRangePush("step");
        halTraceRangePop();
    }
}
BENCHMARK(BM_Untraced_RangePushPop);

}  // namespace

BENCHMARK_MAIN();
