// The host cost of a chain of 100 small operations (memset, copy, empty kernel, event record and
// wait, 25 times over) issued one by one against the same chain captured once and launched as a
// graph (halGraphLaunch), on the CPU backend and on the OpenCL backend, in pairs
// BM_Chain100_Eager/<backend> and BM_Chain100_Graph/<backend>.
//
// Each iteration enqueues the whole chain; the stream is drained every kDrainInterval chains
// with the clock stopped, so queues stay short and both sides drain alike. The CPU column (the
// calling thread's CPU time) is the host cost of one chain; the Time column adds what the
// runtime's own threads took from the calling thread meanwhile. The OpenCL pair is measured once
// more with the drains timed, as the whole process's CPU time and the wall time per chain
// (/opencl_sustained): an OpenCL graph's commands are enqueued on a thread of the stream's own,
// which neither the calling thread's time nor an untimed drain counts.
//
// POLYHAL_BACKEND defaults to "opencl,cpu" here, so that one process has both backends; a
// benchmark whose backend is not loaded is skipped with a message. The CUDA pair runs where
// POLYHAL_BACKEND loads CUDA (tools/gpu-acceptance.sh).
#include <cstdint>
#include <cstring>

#include "bench_support.hpp"

namespace {

using polyhal::bench::check;
using polyhal::bench::useBackend;

constexpr char kBackends[] = "opencl,cpu";

constexpr int kRounds = 25;  // of 4 operations: 100 in the chain
constexpr int64_t kDrainInterval = 16;
constexpr size_t kBytes = 256;
constexpr halDim3 kOneThread = {1, 1, 1};
// The empty kernel in OpenCL C and in PTX (which CUDA's driver compiles for any GPU it runs);
// empty_kernel.c is the CPU backend's.
constexpr char kEmptyKernelSource[] = "kernel void empty(global uint* data, uint n) {}";
constexpr char kEmptyKernelPtx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry empty(.param .u64 data, .param .u32 n) { ret; }\n";
constexpr uint32_t kEmptyKernelCount = 0;

// The objects of one chain on the current device.
class Chain {
  public:
    Chain() {
        check(halCreateStream(&stream_), "halCreateStream");
        check(halCreateEventWithFlag(&event_, HAL_EVENT_DISABLE_TIMING), "halCreateEvent");
        check(halMalloc(&src_, kBytes), "halMalloc");
        check(halMalloc(&dst_, kBytes), "halMalloc");
        check(halMemset(src_, kBytes, 1, kBytes), "halMemset");
        const char* backend = nullptr;
        check(halGetBackendName(&backend), "halGetBackendName");
        if (std::strcmp(backend, "cpu") == 0) {
            check(halModuleLoadFile(&module_, POLYHAL_BENCH_EMPTY_KERNEL), "halModuleLoadFile");
        } else if (std::strcmp(backend, "cuda") == 0) {
            check(halModuleLoadData(&module_, kEmptyKernelPtx, sizeof kEmptyKernelPtx),
                  "halModuleLoadData");
        } else {
            check(halModuleLoadData(&module_, kEmptyKernelSource, sizeof kEmptyKernelSource),
                  "halModuleLoadData");
        }
        check(halModuleGetFunction(&function_, module_, "empty"), "halModuleGetFunction");
    }
    ~Chain() {
        check(halSynchronizeStream(stream_), "halSynchronizeStream");
        if (graph_ != nullptr) check(halGraphDestroy(graph_), "halGraphDestroy");
        check(halModuleUnload(module_), "halModuleUnload");
        check(halFree(src_), "halFree");
        check(halFree(dst_), "halFree");
        check(halDestroyEvent(event_), "halDestroyEvent");
        check(halDestroyStream(stream_), "halDestroyStream");
    }

    // The 100 operations, one call each.
    void enqueue() {
        const void* data = dst_;
        const halKernelArg args[] = {{&data, sizeof data},
                                     {&kEmptyKernelCount, sizeof kEmptyKernelCount}};
        for (int round = 0; round < kRounds; ++round) {
            check(halMemsetAsync(dst_, kBytes, round, kBytes, stream_), "halMemsetAsync");
            check(halMemcpyAsync(dst_, kBytes, src_, kBytes, HAL_MEMCPY_DEVICE_TO_DEVICE, stream_),
                  "halMemcpyAsync");
            check(halLaunchKernel(function_, kOneThread, kOneThread, 0, args, 2, stream_),
                  "halLaunchKernel");
            check(halRecordEvent(event_, stream_), "halRecordEvent");
            check(halStreamWaitEvent(stream_, event_), "halStreamWaitEvent");
        }
    }

    void capture() {
        check(halStreamBeginCapture(stream_, HAL_CAPTURE_MODE_GLOBAL), "halStreamBeginCapture");
        enqueue();
        check(halStreamEndCapture(stream_, &graph_), "halStreamEndCapture");
    }

    void launch() { check(halGraphLaunch(graph_, stream_), "halGraphLaunch"); }
    void synchronize() { check(halSynchronizeStream(stream_), "halSynchronizeStream"); }

  private:
    halStream stream_ = nullptr;
    halEvent event_ = nullptr;
    void* src_ = nullptr;
    void* dst_ = nullptr;
    halModule module_ = nullptr;
    halFunction function_ = nullptr;
    halGraph graph_ = nullptr;
};

// `sustained`: the drains are timed too.
template <typename Issue>
void run(benchmark::State& state, Chain& chain, bool sustained, Issue&& issue) {
    int64_t queued = 0;
    for (auto _ : state) {
        issue();
        if (++queued < kDrainInterval) continue;
        if (!sustained) state.PauseTiming();
        chain.synchronize();
        if (!sustained) state.ResumeTiming();
        queued = 0;
    }
    state.SetItemsProcessed(state.iterations() * kRounds * 4);
}

void BM_Chain100_Eager(benchmark::State& state, const char* backend, bool sustained) {
    if (!useBackend(state, backend, kBackends)) return;
    Chain chain;
    run(state, chain, sustained, [&] { chain.enqueue(); });
}
BENCHMARK_CAPTURE(BM_Chain100_Eager, cpu, "cpu", false);
BENCHMARK_CAPTURE(BM_Chain100_Eager, opencl, "opencl", false);
BENCHMARK_CAPTURE(BM_Chain100_Eager, cuda, "cuda", false);
BENCHMARK_CAPTURE(BM_Chain100_Eager, opencl_sustained, "opencl", true)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

void BM_Chain100_Graph(benchmark::State& state, const char* backend, bool sustained) {
    if (!useBackend(state, backend, kBackends)) return;
    Chain chain;
    chain.capture();
    run(state, chain, sustained, [&] { chain.launch(); });
}
BENCHMARK_CAPTURE(BM_Chain100_Graph, cpu, "cpu", false);
BENCHMARK_CAPTURE(BM_Chain100_Graph, opencl, "opencl", false);
BENCHMARK_CAPTURE(BM_Chain100_Graph, cuda, "cuda", false);
BENCHMARK_CAPTURE(BM_Chain100_Graph, opencl_sustained, "opencl", true)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
    return polyhal::bench::runBenchmarks(argc, argv, kBackends);
}
