// polyhal over CUDA against the CUDA driver API called directly, on the same GPU, in one run.
//
// Pairs BM_<Operation>_Polyhal / BM_<Operation>_Cuda measure the host cost of one operation:
// querying an idle stream, recording an event, a small (4 KiB) copy from pinned memory, the
// launch of an empty kernel (the CTS kernel fill_u32 with n = 0, one thread), and a
// stream-ordered allocation and free (halMallocAsync + halFreeAsync against cuMemAllocAsync +
// cuMemFreeAsync on the device's default memory pool, set to keep what it reserves). The driver
// side has a stream of its own in the device's primary context (the context the cuda backend
// uses) and issues the call the backend issues for the operation; the difference is what
// polyhal adds: the core's validation, handle lookup and pool bookkeeping, and the plugin's
// dispatch.
//
// Enqueueing benchmarks wait for the stream every kDrainInterval iterations with the clock
// stopped, so that queues stay short; both sides drain alike.
//
// libcuda.so.1 is opened with dlopen, never linked: the program builds wherever cuda.h is, and
// without a driver every benchmark is skipped with the driver's (or polyhal's) message. The
// driver side calls what the cuda plugin calls (cuStreamCreateWithPriority, cuMemHostAlloc,
// cuMemcpyAsync, cuModuleLoadDataEx), so the program also runs against the libcuda.so.1 double
// (tests/backends/cuda; LD_LIBRARY_PATH=<build>/tests/backends/cuda/cuda_driver), which measures
// the host cost polyhal adds without a GPU; the double has no memory pools, so
// BM_AllocFree_Cuda is skipped there.
// POLYHAL_BACKEND defaults to "cuda". The kernel image is the CTS's (backends/cuda/cts_kernels),
// found in POLYHAL_BENCH_CUDA_KERNELS or the build tree.
#include <benchmark/benchmark.h>
#include <cuda.h>
#include <dlfcn.h>
#include <polyhal/hal.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

constexpr int64_t kDrainInterval = 1024;
constexpr size_t kSmallCopyBytes = 4 << 10;
constexpr size_t kKernelDataBytes = 256;

// cuda.h maps versioned entry points to macros (cuMemcpyHtoDAsync -> cuMemcpyHtoDAsync_v2);
// expanding the name before stringifying gives the symbol to look up.
#define POLYHAL_BENCH_STRING(x) #x
#define POLYHAL_BENCH_SYMBOL(name) POLYHAL_BENCH_STRING(name)

// The driver entry points the benchmarks use, resolved from libcuda.so.1.
struct Driver {
    decltype(&::cuInit) init = nullptr;
    decltype(&::cuGetErrorName) getErrorName = nullptr;
    decltype(&::cuDeviceGet) deviceGet = nullptr;
    decltype(&::cuDevicePrimaryCtxRetain) primaryCtxRetain = nullptr;
    decltype(&::cuCtxSetCurrent) ctxSetCurrent = nullptr;
    decltype(&::cuStreamCreateWithPriority) streamCreateWithPriority = nullptr;
    decltype(&::cuStreamQuery) streamQuery = nullptr;
    decltype(&::cuStreamSynchronize) streamSynchronize = nullptr;
    decltype(&::cuEventCreate) eventCreate = nullptr;
    decltype(&::cuEventRecord) eventRecord = nullptr;
    decltype(&::cuMemAlloc) memAlloc = nullptr;
    decltype(&::cuMemHostAlloc) memHostAlloc = nullptr;
    decltype(&::cuMemcpyAsync) memcpyAsync = nullptr;
    decltype(&::cuMemAllocAsync) memAllocAsync = nullptr;
    decltype(&::cuMemFreeAsync) memFreeAsync = nullptr;
    decltype(&::cuDeviceGetDefaultMemPool) deviceGetDefaultMemPool = nullptr;
    decltype(&::cuMemPoolSetAttribute) memPoolSetAttribute = nullptr;
    decltype(&::cuModuleLoadDataEx) moduleLoadDataEx = nullptr;
    decltype(&::cuModuleGetFunction) moduleGetFunction = nullptr;
    decltype(&::cuLaunchKernel) launchKernel = nullptr;
};

// The driver side's objects, made once; `error` says why the driver benchmarks are skipped.
struct DirectCuda {
    Driver driver;
    CUstream stream = nullptr;
    CUevent event = nullptr;
    CUdeviceptr device = 0;
    void* pinned = nullptr;
    CUfunction emptyKernel = nullptr;
    CUdeviceptr kernelData = 0;
    std::string error;
    // Why BM_AllocFree_Cuda is skipped (a driver without memory pools), or empty.
    std::string poolError;
};

// The polyhal side's objects; `error` says why the polyhal benchmarks are skipped.
struct Polyhal {
    halStream stream = nullptr;
    halEvent event = nullptr;
    void* device = nullptr;
    void* pinned = nullptr;
    halModule module = nullptr;
    halFunction emptyKernel = nullptr;
    void* kernelData = nullptr;
    std::string error;
};

std::string kernelImagePath() {
    const char* dir = std::getenv("POLYHAL_BENCH_CUDA_KERNELS");
    const std::string base = dir != nullptr ? dir : POLYHAL_BENCH_CUDA_KERNELS;
    for (const char* name : {"/cts_kernels.fatbin", "/cts_kernels.ptx"}) {
        if (std::ifstream(base + name).good()) return base + name;
    }
    return {};
}

std::string driverError(const Driver& driver, CUresult status, const char* what) {
    const char* name = nullptr;
    if (driver.getErrorName == nullptr || driver.getErrorName(status, &name) != CUDA_SUCCESS) {
        name = "unknown CUresult";
    }
    return std::string(what) + ": " + name + " (" + std::to_string(status) + ")";
}

template <typename Function>
bool resolve(void* library, const char* symbol, Function* function, std::string* error) {
    *function = reinterpret_cast<Function>(dlsym(library, symbol));
    if (*function == nullptr) *error = std::string("libcuda.so.1 has no ") + symbol;
    return *function != nullptr;
}

#define POLYHAL_BENCH_RESOLVE(member, name) \
    resolve(library, POLYHAL_BENCH_SYMBOL(name), &cuda.driver.member, &cuda.error)

// The stream-ordered allocator's functions and the device's default pool, which a driver
// without memory pools (or the vendor-driver double) lacks: only BM_AllocFree_Cuda needs them.
void openDriverPool(void* library, CUdevice device, DirectCuda* cuda) {
    Driver& d = cuda->driver;
    if (!resolve(library, POLYHAL_BENCH_SYMBOL(cuMemAllocAsync), &d.memAllocAsync,
                 &cuda->poolError) ||
        !resolve(library, POLYHAL_BENCH_SYMBOL(cuMemFreeAsync), &d.memFreeAsync,
                 &cuda->poolError) ||
        !resolve(library, POLYHAL_BENCH_SYMBOL(cuDeviceGetDefaultMemPool),
                 &d.deviceGetDefaultMemPool, &cuda->poolError) ||
        !resolve(library, POLYHAL_BENCH_SYMBOL(cuMemPoolSetAttribute), &d.memPoolSetAttribute,
                 &cuda->poolError)) {
        return;
    }
    // Like polyhal's pool (and PyTorch's), the driver's pool keeps what it has reserved
    // instead of returning it to the system at every synchronisation.
    CUmemoryPool pool = nullptr;
    cuuint64_t keepEverything = UINT64_MAX;
    CUresult status = d.deviceGetDefaultMemPool(&pool, device);
    if (status != CUDA_SUCCESS) {
        cuda->poolError = driverError(d, status, "cuDeviceGetDefaultMemPool");
        return;
    }
    status = d.memPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keepEverything);
    if (status != CUDA_SUCCESS) cuda->poolError = driverError(d, status, "cuMemPoolSetAttribute");
}

DirectCuda openDirectCuda() {
    DirectCuda cuda;
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        const char* reason = dlerror();
        cuda.error = std::string("dlopen(libcuda.so.1): ") + (reason != nullptr ? reason : "");
        return cuda;
    }
    const bool resolved =
        POLYHAL_BENCH_RESOLVE(init, cuInit) &&
        POLYHAL_BENCH_RESOLVE(getErrorName, cuGetErrorName) &&
        POLYHAL_BENCH_RESOLVE(deviceGet, cuDeviceGet) &&
        POLYHAL_BENCH_RESOLVE(primaryCtxRetain, cuDevicePrimaryCtxRetain) &&
        POLYHAL_BENCH_RESOLVE(ctxSetCurrent, cuCtxSetCurrent) &&
        POLYHAL_BENCH_RESOLVE(streamCreateWithPriority, cuStreamCreateWithPriority) &&
        POLYHAL_BENCH_RESOLVE(streamQuery, cuStreamQuery) &&
        POLYHAL_BENCH_RESOLVE(streamSynchronize, cuStreamSynchronize) &&
        POLYHAL_BENCH_RESOLVE(eventCreate, cuEventCreate) &&
        POLYHAL_BENCH_RESOLVE(eventRecord, cuEventRecord) &&
        POLYHAL_BENCH_RESOLVE(memAlloc, cuMemAlloc) &&
        POLYHAL_BENCH_RESOLVE(memHostAlloc, cuMemHostAlloc) &&
        POLYHAL_BENCH_RESOLVE(memcpyAsync, cuMemcpyAsync) &&
        POLYHAL_BENCH_RESOLVE(moduleLoadDataEx, cuModuleLoadDataEx) &&
        POLYHAL_BENCH_RESOLVE(moduleGetFunction, cuModuleGetFunction) &&
        POLYHAL_BENCH_RESOLVE(launchKernel, cuLaunchKernel);
    if (!resolved) return cuda;
    const Driver& d = cuda.driver;
    // Each step names the call that failed; the first failure is kept.
    const auto step = [&](CUresult status, const char* what) {
        if (status != CUDA_SUCCESS && cuda.error.empty()) cuda.error = driverError(d, status, what);
        return status == CUDA_SUCCESS;
    };
    CUdevice device = 0;
    CUcontext context = nullptr;
    if (!step(d.init(0), "cuInit") || !step(d.deviceGet(&device, 0), "cuDeviceGet") ||
        !step(d.primaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain") ||
        !step(d.ctxSetCurrent(context), "cuCtxSetCurrent") ||
        !step(d.streamCreateWithPriority(&cuda.stream, CU_STREAM_NON_BLOCKING, 0),
              "cuStreamCreateWithPriority") ||
        !step(d.eventCreate(&cuda.event, CU_EVENT_DISABLE_TIMING), "cuEventCreate") ||
        !step(d.memAlloc(&cuda.device, kSmallCopyBytes), "cuMemAlloc") ||
        !step(d.memHostAlloc(&cuda.pinned, kSmallCopyBytes, 0), "cuMemHostAlloc") ||
        !step(d.memAlloc(&cuda.kernelData, kKernelDataBytes), "cuMemAlloc")) {
        return cuda;
    }
    openDriverPool(library, device, &cuda);
    const std::string path = kernelImagePath();
    if (path.empty()) {
        cuda.error = "no CUDA conformance kernels (cts_kernels.fatbin or .ptx) found";
        return cuda;
    }
    std::ifstream file(path, std::ios::binary);
    std::vector<char> image((std::istreambuf_iterator<char>(file)), {});
    image.push_back('\0');  // PTX is loaded as a NUL-terminated string
    CUmodule module = nullptr;
    if (step(d.moduleLoadDataEx(&module, image.data(), 0, nullptr, nullptr),
             "cuModuleLoadDataEx")) {
        step(d.moduleGetFunction(&cuda.emptyKernel, module, "fill_u32"), "cuModuleGetFunction");
    }
    return cuda;
}

DirectCuda& directCuda() {
    static DirectCuda cuda = openDirectCuda();
    return cuda;
}

Polyhal openPolyhal() {
    Polyhal hal;
    const auto step = [&](halError status, const char* what) {
        if (status != HAL_SUCCESS && hal.error.empty()) {
            hal.error = std::string(what) + ": " + halGetErrorName(status) + ": " +
                        halGetLastErrorMessage();
        }
        return status == HAL_SUCCESS;
    };
    if (!step(halCreateStream(&hal.stream), "halCreateStream") ||
        !step(halCreateEventWithFlag(&hal.event, HAL_EVENT_DISABLE_TIMING), "halCreateEvent") ||
        !step(halMalloc(&hal.device, kSmallCopyBytes), "halMalloc") ||
        !step(halMallocHost(&hal.pinned, kSmallCopyBytes), "halMallocHost") ||
        !step(halMalloc(&hal.kernelData, kKernelDataBytes), "halMalloc")) {
        return hal;
    }
    const std::string path = kernelImagePath();
    if (path.empty()) {
        hal.error = "no CUDA conformance kernels (cts_kernels.fatbin or .ptx) found";
    } else if (step(halModuleLoadFile(&hal.module, path.c_str()), "halModuleLoadFile")) {
        step(halModuleGetFunction(&hal.emptyKernel, hal.module, "fill_u32"),
             "halModuleGetFunction");
    }
    return hal;
}

Polyhal& polyhal() {
    static Polyhal hal = openPolyhal();
    return hal;
}

// The side's objects, or nullptr after skipping the benchmark with the reason.
DirectCuda* requireCuda(benchmark::State& state) {
    DirectCuda& cuda = directCuda();
    if (cuda.error.empty()) return &cuda;
    state.SkipWithError(cuda.error.c_str());
    return nullptr;
}

Polyhal* requirePolyhal(benchmark::State& state) {
    Polyhal& hal = polyhal();
    if (hal.error.empty()) return &hal;
    state.SkipWithError(hal.error.c_str());
    return nullptr;
}

// Runs `enqueue` once per iteration, waiting for the queue every kDrainInterval iterations
// with the clock stopped. `enqueue` and `drain` return true on success.
template <typename Enqueue, typename Drain>
void enqueueLoop(benchmark::State& state, Enqueue enqueue, Drain drain) {
    int64_t queued = 0;
    for (auto _ : state) {
        if (!enqueue()) {
            state.SkipWithError("an enqueue failed");
            break;
        }
        if (++queued == kDrainInterval) {
            state.PauseTiming();
            drain();
            queued = 0;
            state.ResumeTiming();
        }
    }
    drain();
}

void BM_StreamQuery_Polyhal(benchmark::State& state) {
    Polyhal* hal = requirePolyhal(state);
    if (hal == nullptr || halSynchronizeStream(hal->stream) != HAL_SUCCESS) return;
    for (auto _ : state) benchmark::DoNotOptimize(halQueryStream(hal->stream));
}

void BM_StreamQuery_Cuda(benchmark::State& state) {
    DirectCuda* cuda = requireCuda(state);
    if (cuda == nullptr || cuda->driver.streamSynchronize(cuda->stream) != CUDA_SUCCESS) return;
    for (auto _ : state) benchmark::DoNotOptimize(cuda->driver.streamQuery(cuda->stream));
}

void BM_EventRecord_Polyhal(benchmark::State& state) {
    Polyhal* hal = requirePolyhal(state);
    if (hal == nullptr) return;
    enqueueLoop(
        state, [&] { return halRecordEvent(hal->event, hal->stream) == HAL_SUCCESS; },
        [&] { return halSynchronizeStream(hal->stream) == HAL_SUCCESS; });
}

void BM_EventRecord_Cuda(benchmark::State& state) {
    DirectCuda* cuda = requireCuda(state);
    if (cuda == nullptr) return;
    const Driver& d = cuda->driver;
    enqueueLoop(
        state, [&] { return d.eventRecord(cuda->event, cuda->stream) == CUDA_SUCCESS; },
        [&] { return d.streamSynchronize(cuda->stream) == CUDA_SUCCESS; });
}

void BM_MemcpySmall_Polyhal(benchmark::State& state) {
    Polyhal* hal = requirePolyhal(state);
    if (hal == nullptr) return;
    enqueueLoop(
        state,
        [&] {
            return halMemcpyAsync(hal->device, kSmallCopyBytes, hal->pinned, kSmallCopyBytes,
                                  HAL_MEMCPY_HOST_TO_DEVICE, hal->stream) == HAL_SUCCESS;
        },
        [&] { return halSynchronizeStream(hal->stream) == HAL_SUCCESS; });
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kSmallCopyBytes));
}

void BM_MemcpySmall_Cuda(benchmark::State& state) {
    DirectCuda* cuda = requireCuda(state);
    if (cuda == nullptr) return;
    const Driver& d = cuda->driver;
    enqueueLoop(
        state,
        [&] {
            return d.memcpyAsync(cuda->device, reinterpret_cast<CUdeviceptr>(cuda->pinned),
                                 kSmallCopyBytes, cuda->stream) == CUDA_SUCCESS;
        },
        [&] { return d.streamSynchronize(cuda->stream) == CUDA_SUCCESS; });
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kSmallCopyBytes));
}

void BM_LaunchEmptyKernel_Polyhal(benchmark::State& state) {
    Polyhal* hal = requirePolyhal(state);
    if (hal == nullptr) return;
    void* data = hal->kernelData;
    const uint32_t value = 0, count = 0;  // fill_u32 with n = 0 writes nothing
    const halKernelArg args[] = {
        {&data, sizeof data}, {&value, sizeof value}, {&count, sizeof count}};
    enqueueLoop(
        state,
        [&] {
            return halLaunchKernel(hal->emptyKernel, {1, 1, 1}, {1, 1, 1}, 0, args, 3,
                                   hal->stream) == HAL_SUCCESS;
        },
        [&] { return halSynchronizeStream(hal->stream) == HAL_SUCCESS; });
}

void BM_LaunchEmptyKernel_Cuda(benchmark::State& state) {
    DirectCuda* cuda = requireCuda(state);
    if (cuda == nullptr) return;
    const Driver& d = cuda->driver;
    CUdeviceptr data = cuda->kernelData;
    uint32_t value = 0, count = 0;
    void* params[] = {&data, &value, &count};
    enqueueLoop(
        state,
        [&] {
            return d.launchKernel(cuda->emptyKernel, 1, 1, 1, 1, 1, 1, 0, cuda->stream, params,
                                  nullptr) == CUDA_SUCCESS;
        },
        [&] { return d.streamSynchronize(cuda->stream) == CUDA_SUCCESS; });
}

void BM_AllocFree_Polyhal(benchmark::State& state) {
    Polyhal* hal = requirePolyhal(state);
    if (hal == nullptr) return;
    const auto size = static_cast<size_t>(state.range(0));
    enqueueLoop(
        state,
        [&] {
            void* block = nullptr;
            return halMallocAsync(&block, size, hal->stream) == HAL_SUCCESS &&
                   halFreeAsync(block, hal->stream) == HAL_SUCCESS;
        },
        [&] { return halSynchronizeStream(hal->stream) == HAL_SUCCESS; });
}

void BM_AllocFree_Cuda(benchmark::State& state) {
    DirectCuda* cuda = requireCuda(state);
    if (cuda == nullptr) return;
    if (!cuda->poolError.empty()) {
        state.SkipWithError(cuda->poolError.c_str());
        return;
    }
    const Driver& d = cuda->driver;
    const auto size = static_cast<size_t>(state.range(0));
    enqueueLoop(
        state,
        [&] {
            CUdeviceptr block = 0;
            return d.memAllocAsync(&block, size, cuda->stream) == CUDA_SUCCESS &&
                   d.memFreeAsync(block, cuda->stream) == CUDA_SUCCESS;
        },
        [&] { return d.streamSynchronize(cuda->stream) == CUDA_SUCCESS; });
}

BENCHMARK(BM_StreamQuery_Polyhal);
BENCHMARK(BM_StreamQuery_Cuda);
BENCHMARK(BM_EventRecord_Polyhal);
BENCHMARK(BM_EventRecord_Cuda);
BENCHMARK(BM_MemcpySmall_Polyhal);
BENCHMARK(BM_MemcpySmall_Cuda);
BENCHMARK(BM_LaunchEmptyKernel_Polyhal);
BENCHMARK(BM_LaunchEmptyKernel_Cuda);
BENCHMARK(BM_AllocFree_Polyhal)->Arg(256)->Arg(64 << 10)->Arg(4 << 20);
BENCHMARK(BM_AllocFree_Cuda)->Arg(256)->Arg(64 << 10)->Arg(4 << 20);

}  // namespace

int main(int argc, char** argv) {
    // Before the first polyhal call; an explicit POLYHAL_BACKEND wins.
    setenv("POLYHAL_BACKEND", "cuda", 0);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    if (const halError status = halInit(); status != HAL_SUCCESS) {
        // The driver side may still run; the polyhal benchmarks are skipped with this message.
        std::fprintf(stderr, "halInit: %s: %s\n", halGetErrorName(status),
                     halGetLastErrorMessage());
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
