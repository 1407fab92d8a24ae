// polyhal over OpenCL against OpenCL called directly, and the CPU backend against the OpenCL
// runtime on the same work, in one run (in CI the OpenCL runtime is PoCL, which runs on the CPU).
//
// 1. Per-call overhead, in pairs BM_<Operation>_Polyhal / BM_<Operation>_OpenCL. The OpenCL side
//    has its own context, in-order queues and SVM memory on the device polyhal uses, made with
//    the properties the backend uses (backends/opencl: platform.cpp, stream.cpp, memory.cpp), and
//    issues the commands the backend issues for the operation; like the backend, it asks each
//    command for its event and keeps the queue's last one. The difference is what polyhal adds:
//    the core's validation, handle lookup and pool bookkeeping, and the backend's locking and
//    event references.
//    Enqueueing benchmarks wait for the queue every kDrainInterval iterations with the clock
//    stopped, so that queues stay short; both sides drain alike. The CPU column (the calling
//    thread's CPU time) is the per-call cost; the Time column adds whatever the runtime's own
//    threads took from the calling thread meanwhile.
// 2. The CPU backend against the OpenCL runtime: submit-to-completion latency of an empty kernel
//    (polyhal on either backend, and OpenCL directly) and of an empty host function (polyhal on
//    either backend), and device-to-device copy bandwidth against plain memcpy.
// 3. cl_khr_command_buffer against the same commands enqueued one by one, in OpenCL alone: the
//    75 commands a launch of polyhal_graph_bench's graph runs (25 times a fill, a copy and the
//    empty kernel), recorded once and enqueued with clEnqueueCommandBufferKHR, against the
//    backend's 75 SVM enqueues. Whether a native graph of the opencl backend could beat the
//    core's replay (docs/benchmarks.md, "Graphs").
//
// POLYHAL_BACKEND defaults to "opencl,cpu" here, so that one process has both backends; a
// benchmark whose backend is not loaded is skipped with a message.
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <benchmark/benchmark.h>
#include <polyhal/hal.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_support.hpp"

namespace {

using polyhal::bench::check;
using polyhal::bench::useBackend;

constexpr char kBackends[] = "opencl,cpu";
constexpr int64_t kDrainInterval = 1024;
constexpr size_t kSmallCopyBytes = 4 << 10;
constexpr size_t kLargeCopyBytes = 64 << 20;

// The empty kernel in OpenCL C; empty_kernel.c is the CPU backend's. A pointer and a count, the
// shape of a typical launch, so that both sides pass an SVM pointer and a value.
constexpr char kEmptyKernelSource[] = "kernel void empty(global uint* data, uint n) {}";
constexpr uint32_t kEmptyKernelCount = 0;
constexpr size_t kEmptyKernelDataBytes = 256;
constexpr halDim3 kOneThread = {1, 1, 1};
constexpr size_t kOneWorkItem[3] = {1, 1, 1};  // the backend always launches three dimensions

void checkCl(cl_int status, const char* what) {
    if (status != CL_SUCCESS) {
        std::fprintf(stderr, "%s: OpenCL error %d\n", what, status);
        std::abort();
    }
}

// Waits for the queued work every `interval` iterations with the clock stopped.
template <class Drain>
void drainPeriodically(benchmark::State& state, int64_t& queued, Drain&& drain,
                       int64_t interval = kDrainInterval) {
    if (++queued < interval) return;
    state.PauseTiming();
    drain();
    state.ResumeTiming();
    queued = 0;
}

// ---------------------------------------------------------------------------------------------
// The polyhal side: objects on the current device for the length of one benchmark.

struct Stream {
    halStream handle = nullptr;
    Stream() { check(halCreateStream(&handle), "halCreateStream"); }
    ~Stream() {
        check(halSynchronizeStream(handle), "halSynchronizeStream");
        check(halDestroyStream(handle), "halDestroyStream");
    }
    void synchronize() { check(halSynchronizeStream(handle), "halSynchronizeStream"); }
};

struct Event {
    halEvent handle = nullptr;
    Event() { check(halCreateEvent(&handle), "halCreateEvent"); }
    ~Event() { check(halDestroyEvent(handle), "halDestroyEvent"); }
};

struct DeviceMemory {
    void* pointer = nullptr;
    explicit DeviceMemory(size_t bytes) {
        check(halMalloc(&pointer, bytes), "halMalloc");
        check(halMemset(pointer, bytes, 1, bytes), "halMemset");  // backs every page
    }
    ~DeviceMemory() { check(halFree(pointer), "halFree"); }
};

// The empty kernel on the current device: OpenCL C source on the opencl backend, the
// empty_kernel.c module on the cpu backend.
class EmptyKernel {
  public:
    EmptyKernel() : data_(kEmptyKernelDataBytes) {
        const char* backend = nullptr;
        check(halGetBackendName(&backend), "halGetBackendName");
        if (std::strcmp(backend, "cpu") == 0) {
            check(halModuleLoadFile(&module_, POLYHAL_BENCH_EMPTY_KERNEL), "halModuleLoadFile");
        } else {
            check(halModuleLoadData(&module_, kEmptyKernelSource, sizeof kEmptyKernelSource),
                  "halModuleLoadData");
        }
        check(halModuleGetFunction(&function_, module_, "empty"), "halModuleGetFunction");
    }
    ~EmptyKernel() { check(halModuleUnload(module_), "halModuleUnload"); }

    // One thread, as the OpenCL side's one work-item.
    halError launch(halStream stream) {
        const void* data = data_.pointer;
        const halKernelArg args[] = {{&data, sizeof data},
                                     {&kEmptyKernelCount, sizeof kEmptyKernelCount}};
        return halLaunchKernel(function_, kOneThread, kOneThread, 0, args, 2, stream);
    }

  private:
    DeviceMemory data_;
    halModule module_ = nullptr;
    halFunction function_ = nullptr;
};

void emptyHostFunction(void*) {}

// ---------------------------------------------------------------------------------------------
// The OpenCL side.

template <class T>
T deviceInfo(cl_device_id device, cl_device_info query) {
    T value{};
    checkCl(clGetDeviceInfo(device, query, sizeof value, &value, nullptr), "clGetDeviceInfo");
    return value;
}

bool hasExtension(cl_device_id device, const char* extension) {
    size_t size = 0;
    checkCl(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, nullptr, &size), "clGetDeviceInfo");
    std::string list(size, '\0');
    checkCl(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, size, list.data(), nullptr),
            "clGetDeviceInfo");
    list = " " + std::string(list.c_str()) + " ";
    return list.find(std::string(" ") + extension + " ") != std::string::npos;
}

// A context, queues, device memory flags and the empty kernel, made as the backend makes its own.
struct DirectOpenCL {
    explicit DirectOpenCL(cl_device_id id) : device(id) {
        const auto platform = deviceInfo<cl_platform_id>(device, CL_DEVICE_PLATFORM);
        const cl_context_properties contextProperties[] = {
            CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform), 0};
        cl_int error = CL_SUCCESS;
        context = clCreateContext(contextProperties, 1, &device, nullptr, nullptr, &error);
        checkCl(error, "clCreateContext");
        queue = createQueue();
        waitingQueue = createQueue();
        // memAllocDevice: fine-grain only where the device has fine-grain system SVM.
        if (deviceInfo<cl_device_svm_capabilities>(device, CL_DEVICE_SVM_CAPABILITIES) &
            CL_DEVICE_SVM_FINE_GRAIN_SYSTEM) {
            deviceMemoryFlags |= CL_MEM_SVM_FINE_GRAIN_BUFFER;
        }
        const char* source = kEmptyKernelSource;
        cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &error);
        checkCl(error, "clCreateProgramWithSource");
        checkCl(clBuildProgram(program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
        emptyKernel = clCreateKernel(program, "empty", &error);
        checkCl(error, "clCreateKernel");
        clReleaseProgram(program);  // the kernel keeps it
    }

    // streamCreate's queue for priority 0: in order, profiling where the device has it, the
    // medium priority hint where the device has cl_khr_priority_hints.
    cl_command_queue createQueue() const {
        cl_queue_properties properties[5] = {0};
        size_t next = 0;
        if (deviceInfo<cl_command_queue_properties>(device, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES) &
            CL_QUEUE_PROFILING_ENABLE) {
            properties[next++] = CL_QUEUE_PROPERTIES;
            properties[next++] = CL_QUEUE_PROFILING_ENABLE;
        }
        if (hasExtension(device, "cl_khr_priority_hints")) {
            properties[next++] = CL_QUEUE_PRIORITY_KHR;
            properties[next++] = CL_QUEUE_PRIORITY_MED_KHR;
        }
        cl_int error = CL_SUCCESS;
        cl_command_queue created =
            clCreateCommandQueueWithProperties(context, device, properties, &error);
        checkCl(error, "clCreateCommandQueueWithProperties");
        return created;
    }

    // What launchKernel issues for the empty kernel; `event` may be NULL.
    void enqueueEmptyKernel(void* data, cl_event* event) const {
        checkCl(clSetKernelArgSVMPointer(emptyKernel, 0, data), "clSetKernelArgSVMPointer");
        checkCl(clSetKernelArg(emptyKernel, 1, sizeof kEmptyKernelCount, &kEmptyKernelCount),
                "clSetKernelArg");
        checkCl(clEnqueueNDRangeKernel(queue, emptyKernel, 3, nullptr, kOneWorkItem, kOneWorkItem,
                                       0, nullptr, event),
                "clEnqueueNDRangeKernel");
    }

    void finish(cl_command_queue which) const { checkCl(clFinish(which), "clFinish"); }

    cl_device_id device;
    cl_context context = nullptr;
    cl_command_queue queue = nullptr;
    cl_command_queue waitingQueue = nullptr;  // the second queue, for BM_StreamWaitEvent_OpenCL
    cl_svm_mem_flags deviceMemoryFlags = CL_MEM_READ_WRITE;
    cl_kernel emptyKernel = nullptr;
};

// The OpenCL side on the device of polyhal's opencl backend (found through a stream's queue);
// NULL, with the benchmark skipped, when that backend is not loaded.
const DirectOpenCL* directOpenCL(benchmark::State& state) {
    if (!useBackend(state, "opencl", kBackends)) return nullptr;
    static const DirectOpenCL* direct = [] {
        Stream stream;
        void* queue = nullptr;
        check(halStreamGetNativeHandle(stream.handle, &queue), "halStreamGetNativeHandle");
        cl_device_id device = nullptr;
        checkCl(clGetCommandQueueInfo(static_cast<cl_command_queue>(queue), CL_QUEUE_DEVICE,
                                      sizeof device, &device, nullptr),
                "clGetCommandQueueInfo");
        return new DirectOpenCL(device);  // lives as long as the process
    }();
    return direct;
}

struct SvmMemory {
    const DirectOpenCL& cl;
    void* pointer;
    SvmMemory(const DirectOpenCL& cl, size_t bytes)
        : cl(cl), pointer(clSVMAlloc(cl.context, cl.deviceMemoryFlags, bytes, 0)) {
        if (pointer == nullptr) {
            std::fprintf(stderr, "clSVMAlloc returned NULL for %zu bytes\n", bytes);
            std::abort();
        }
        const unsigned char one = 1;
        checkCl(clEnqueueSVMMemFill(cl.queue, pointer, &one, 1, bytes, 0, nullptr, nullptr),
                "clEnqueueSVMMemFill");
        cl.finish(cl.queue);
    }
    ~SvmMemory() { clSVMFree(cl.context, pointer); }
};

// The event of a queue's last command, kept as the backend's stream keeps it (synchronize waits
// for it), the previous one released.
class LastCommand {
  public:
    LastCommand() = default;
    ~LastCommand() { replace(nullptr); }
    LastCommand(const LastCommand&) = delete;
    LastCommand& operator=(const LastCommand&) = delete;

    void replace(cl_event event) {
        if (event_ != nullptr) clReleaseEvent(event_);
        event_ = event;
    }
    cl_event get() const { return event_; }

  private:
    cl_event event_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// 1. Per-call overhead of polyhal over OpenCL.

// halRecordEvent; eventRecord enqueues a marker and flushes the queue (another queue may wait
// for the marker, which OpenCL allows to end only once the marker's queue is flushed).
void BM_RecordEvent_Polyhal(benchmark::State& state) {
    if (!useBackend(state, "opencl", kBackends)) return;
    Stream stream;
    Event event;
    int64_t queued = 0;
    for (auto _ : state) {
        check(halRecordEvent(event.handle, stream.handle), "halRecordEvent");
        drainPeriodically(state, queued, [&] { stream.synchronize(); });
    }
}
BENCHMARK(BM_RecordEvent_Polyhal);

void BM_RecordEvent_OpenCL(benchmark::State& state) {
    const DirectOpenCL* cl = directOpenCL(state);
    if (cl == nullptr) return;
    LastCommand marker;
    int64_t queued = 0;
    for (auto _ : state) {
        cl_event event = nullptr;
        checkCl(clEnqueueMarkerWithWaitList(cl->queue, 0, nullptr, &event),
                "clEnqueueMarkerWithWaitList");
        checkCl(clFlush(cl->queue), "clFlush");
        marker.replace(event);
        drainPeriodically(state, queued, [&] { cl->finish(cl->queue); });
    }
    cl->finish(cl->queue);
}
BENCHMARK(BM_RecordEvent_OpenCL);

// Querying an event whose work has finished.
void BM_QueryEvent_Polyhal(benchmark::State& state) {
    if (!useBackend(state, "opencl", kBackends)) return;
    Stream stream;
    Event event;
    check(halRecordEvent(event.handle, stream.handle), "halRecordEvent");
    stream.synchronize();
    for (auto _ : state) check(halQueryEvent(event.handle), "halQueryEvent");
}
BENCHMARK(BM_QueryEvent_Polyhal);

void BM_QueryEvent_OpenCL(benchmark::State& state) {
    const DirectOpenCL* cl = directOpenCL(state);
    if (cl == nullptr) return;
    LastCommand marker;
    cl_event event = nullptr;
    checkCl(clEnqueueMarkerWithWaitList(cl->queue, 0, nullptr, &event),
            "clEnqueueMarkerWithWaitList");
    marker.replace(event);
    cl->finish(cl->queue);
    for (auto _ : state) {
        cl_int status = CL_QUEUED;
        checkCl(clGetEventInfo(marker.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                               &status, nullptr),
                "clGetEventInfo");
        benchmark::DoNotOptimize(status);
    }
}
BENCHMARK(BM_QueryEvent_OpenCL);

// A second stream waits for an event of the first (a barrier on the marker).
void BM_StreamWaitEvent_Polyhal(benchmark::State& state) {
    if (!useBackend(state, "opencl", kBackends)) return;
    Stream producer;
    Stream waiter;
    Event event;
    check(halRecordEvent(event.handle, producer.handle), "halRecordEvent");
    producer.synchronize();
    int64_t queued = 0;
    for (auto _ : state) {
        check(halStreamWaitEvent(waiter.handle, event.handle), "halStreamWaitEvent");
        drainPeriodically(state, queued, [&] { waiter.synchronize(); });
    }
}
BENCHMARK(BM_StreamWaitEvent_Polyhal);

void BM_StreamWaitEvent_OpenCL(benchmark::State& state) {
    const DirectOpenCL* cl = directOpenCL(state);
    if (cl == nullptr) return;
    LastCommand marker;
    cl_event event = nullptr;
    checkCl(clEnqueueMarkerWithWaitList(cl->queue, 0, nullptr, &event),
            "clEnqueueMarkerWithWaitList");
    marker.replace(event);
    cl->finish(cl->queue);
    const cl_event awaited = marker.get();
    LastCommand barrier;
    int64_t queued = 0;
    for (auto _ : state) {
        checkCl(clEnqueueBarrierWithWaitList(cl->waitingQueue, 1, &awaited, &event),
                "clEnqueueBarrierWithWaitList");
        barrier.replace(event);
        drainPeriodically(state, queued, [&] { cl->finish(cl->waitingQueue); });
    }
    cl->finish(cl->waitingQueue);
}
BENCHMARK(BM_StreamWaitEvent_OpenCL);

// Enqueueing a 4 KiB device-to-device copy.
void BM_MemcpyAsync4KiB_Polyhal(benchmark::State& state) {
    if (!useBackend(state, "opencl", kBackends)) return;
    DeviceMemory src(kSmallCopyBytes);
    DeviceMemory dst(kSmallCopyBytes);
    Stream stream;
    int64_t queued = 0;
    for (auto _ : state) {
        check(halMemcpyAsync(dst.pointer, kSmallCopyBytes, src.pointer, kSmallCopyBytes,
                             HAL_MEMCPY_DEVICE_TO_DEVICE, stream.handle),
              "halMemcpyAsync");
        drainPeriodically(state, queued, [&] { stream.synchronize(); });
    }
}
BENCHMARK(BM_MemcpyAsync4KiB_Polyhal);

void BM_MemcpyAsync4KiB_OpenCL(benchmark::State& state) {
    const DirectOpenCL* cl = directOpenCL(state);
    if (cl == nullptr) return;
    SvmMemory src(*cl, kSmallCopyBytes);
    SvmMemory dst(*cl, kSmallCopyBytes);
    LastCommand last;
    int64_t queued = 0;
    for (auto _ : state) {
        cl_event event = nullptr;
        checkCl(clEnqueueSVMMemcpy(cl->queue, CL_FALSE, dst.pointer, src.pointer, kSmallCopyBytes,
                                   0, nullptr, &event),
                "clEnqueueSVMMemcpy");
        last.replace(event);
        drainPeriodically(state, queued, [&] { cl->finish(cl->queue); });
    }
    cl->finish(cl->queue);
}
BENCHMARK(BM_MemcpyAsync4KiB_OpenCL);

// Enqueueing the empty kernel with its two arguments.
void BM_LaunchEmptyKernel_Polyhal(benchmark::State& state) {
    if (!useBackend(state, "opencl", kBackends)) return;
    EmptyKernel kernel;
    Stream stream;
    int64_t queued = 0;
    for (auto _ : state) {
        check(kernel.launch(stream.handle), "halLaunchKernel");
        drainPeriodically(state, queued, [&] { stream.synchronize(); });
    }
}
BENCHMARK(BM_LaunchEmptyKernel_Polyhal);

void BM_LaunchEmptyKernel_OpenCL(benchmark::State& state) {
    const DirectOpenCL* cl = directOpenCL(state);
    if (cl == nullptr) return;
    SvmMemory data(*cl, kEmptyKernelDataBytes);
    LastCommand last;
    int64_t queued = 0;
    for (auto _ : state) {
        cl_event event = nullptr;
        cl->enqueueEmptyKernel(data.pointer, &event);
        last.replace(event);
        drainPeriodically(state, queued, [&] { cl->finish(cl->queue); });
    }
    cl->finish(cl->queue);
}
BENCHMARK(BM_LaunchEmptyKernel_OpenCL);

// Waiting for a stream whose work has finished: halSynchronizeStream against clFinish.
void BM_SynchronizeStream_Polyhal(benchmark::State& state) {
    if (!useBackend(state, "opencl", kBackends)) return;
    DeviceMemory memory(kSmallCopyBytes);
    Stream stream;
    check(halMemsetAsync(memory.pointer, kSmallCopyBytes, 0, kSmallCopyBytes, stream.handle),
          "halMemsetAsync");
    for (auto _ : state) stream.synchronize();
}
BENCHMARK(BM_SynchronizeStream_Polyhal);

void BM_SynchronizeStream_OpenCL(benchmark::State& state) {
    const DirectOpenCL* cl = directOpenCL(state);
    if (cl == nullptr) return;
    SvmMemory memory(*cl, kSmallCopyBytes);  // fills it, then finishes the queue
    for (auto _ : state) cl->finish(cl->queue);
}
BENCHMARK(BM_SynchronizeStream_OpenCL);

// ---------------------------------------------------------------------------------------------
// 2. The CPU backend against the OpenCL runtime. The calling thread sleeps while it waits, so
// these report wall-clock time.

// Submit-to-completion latency of the empty kernel on one thread.
void BM_KernelRoundTrip_Polyhal(benchmark::State& state, const char* backend) {
    if (!useBackend(state, backend, kBackends)) return;
    EmptyKernel kernel;
    Stream stream;
    for (auto _ : state) {
        check(kernel.launch(stream.handle), "halLaunchKernel");
        stream.synchronize();
    }
}
BENCHMARK_CAPTURE(BM_KernelRoundTrip_Polyhal, cpu, "cpu")->UseRealTime();
BENCHMARK_CAPTURE(BM_KernelRoundTrip_Polyhal, opencl, "opencl")->UseRealTime();

// OpenCL at its leanest: no event asked for, clFinish.
void BM_KernelRoundTrip_OpenCL(benchmark::State& state) {
    const DirectOpenCL* cl = directOpenCL(state);
    if (cl == nullptr) return;
    SvmMemory data(*cl, kEmptyKernelDataBytes);
    for (auto _ : state) {
        cl->enqueueEmptyKernel(data.pointer, nullptr);
        cl->finish(cl->queue);
    }
}
BENCHMARK(BM_KernelRoundTrip_OpenCL)->UseRealTime();

// OpenCL waiting as the backend does: the command's event and clWaitForEvents, not clFinish.
// Runtimes differ in how each wait sleeps; this pair shows which part of the round trip is the
// runtime's wait.
void BM_KernelRoundTrip_OpenCLEventWait(benchmark::State& state) {
    const DirectOpenCL* cl = directOpenCL(state);
    if (cl == nullptr) return;
    SvmMemory data(*cl, kEmptyKernelDataBytes);
    for (auto _ : state) {
        cl_event event = nullptr;
        cl->enqueueEmptyKernel(data.pointer, &event);
        clFlush(cl->queue);
        clWaitForEvents(1, &event);
        clReleaseEvent(event);
    }
}
BENCHMARK(BM_KernelRoundTrip_OpenCLEventWait)->UseRealTime();

// Submit-to-completion latency of an empty host function.
void BM_HostFuncRoundTrip_Polyhal(benchmark::State& state, const char* backend) {
    if (!useBackend(state, backend, kBackends)) return;
    Stream stream;
    for (auto _ : state) {
        check(halLaunchHostFunc(stream.handle, emptyHostFunction, nullptr), "halLaunchHostFunc");
        stream.synchronize();
    }
}
BENCHMARK_CAPTURE(BM_HostFuncRoundTrip_Polyhal, cpu, "cpu")->UseRealTime();
BENCHMARK_CAPTURE(BM_HostFuncRoundTrip_Polyhal, opencl, "opencl")->UseRealTime();

// A synchronous 64 MiB device-to-device copy.
void BM_Copy64MiB_Polyhal(benchmark::State& state, const char* backend) {
    if (!useBackend(state, backend, kBackends)) return;
    DeviceMemory src(kLargeCopyBytes);
    DeviceMemory dst(kLargeCopyBytes);
    for (auto _ : state) {
        check(halMemcpy(dst.pointer, kLargeCopyBytes, src.pointer, kLargeCopyBytes,
                        HAL_MEMCPY_DEVICE_TO_DEVICE),
              "halMemcpy");
    }
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kLargeCopyBytes));
}
BENCHMARK_CAPTURE(BM_Copy64MiB_Polyhal, cpu, "cpu")->UseRealTime();
BENCHMARK_CAPTURE(BM_Copy64MiB_Polyhal, opencl, "opencl")->UseRealTime();

void BM_Copy64MiB_OpenCL(benchmark::State& state) {
    const DirectOpenCL* cl = directOpenCL(state);
    if (cl == nullptr) return;
    SvmMemory src(*cl, kLargeCopyBytes);
    SvmMemory dst(*cl, kLargeCopyBytes);
    for (auto _ : state) {
        checkCl(clEnqueueSVMMemcpy(cl->queue, CL_FALSE, dst.pointer, src.pointer, kLargeCopyBytes,
                                   0, nullptr, nullptr),
                "clEnqueueSVMMemcpy");
        cl->finish(cl->queue);
    }
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kLargeCopyBytes));
}
BENCHMARK(BM_Copy64MiB_OpenCL)->UseRealTime();

void BM_Copy64MiB_Memcpy(benchmark::State& state) {
    std::vector<char> src(kLargeCopyBytes, 1);
    std::vector<char> dst(kLargeCopyBytes, 0);
    for (auto _ : state) {
        std::memcpy(dst.data(), src.data(), kLargeCopyBytes);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kLargeCopyBytes));
}
BENCHMARK(BM_Copy64MiB_Memcpy)->UseRealTime();

// ---------------------------------------------------------------------------------------------
// 3. A command buffer against the same commands enqueued one by one.

constexpr int kChainRounds = 25;  // of a fill, a copy and a kernel
constexpr int64_t kChainDrainInterval = 16;
constexpr size_t kChainBytes = 256;

// The extension's entries, which an ICD loader reaches only through the platform.
struct CommandBufferApi {
    clCreateCommandBufferKHR_fn create = nullptr;
    clFinalizeCommandBufferKHR_fn finalize = nullptr;
    clReleaseCommandBufferKHR_fn release = nullptr;
    clEnqueueCommandBufferKHR_fn enqueue = nullptr;
    clCommandFillBufferKHR_fn fill = nullptr;
    clCommandCopyBufferKHR_fn copy = nullptr;
    clCommandNDRangeKernelKHR_fn kernel = nullptr;

    explicit CommandBufferApi(cl_device_id device) {
        const auto platform = deviceInfo<cl_platform_id>(device, CL_DEVICE_PLATFORM);
        const auto load = [platform](auto* entry, const char* name) {
            *entry = reinterpret_cast<std::remove_pointer_t<decltype(entry)>>(
                clGetExtensionFunctionAddressForPlatform(platform, name));
        };
        load(&create, "clCreateCommandBufferKHR");
        load(&finalize, "clFinalizeCommandBufferKHR");
        load(&release, "clReleaseCommandBufferKHR");
        load(&enqueue, "clEnqueueCommandBufferKHR");
        load(&fill, "clCommandFillBufferKHR");
        load(&copy, "clCommandCopyBufferKHR");
        load(&kernel, "clCommandNDRangeKernelKHR");
    }
    bool complete() const {
        return create && finalize && release && enqueue && fill && copy && kernel;
    }
};

// SVM memory as a buffer (CL_MEM_USE_HOST_PTR on the pointer clSVMAlloc returned: the buffer's
// storage is the SVM allocation), since the extension records no SVM commands.
struct SvmBuffer {
    SvmMemory svm;
    cl_mem buffer = nullptr;
    SvmBuffer(const DirectOpenCL& cl, size_t bytes) : svm(cl, bytes) {
        cl_int error = CL_SUCCESS;
        buffer = clCreateBuffer(cl.context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes,
                                svm.pointer, &error);
        checkCl(error, "clCreateBuffer");
    }
    ~SvmBuffer() { clReleaseMemObject(buffer); }
};

// The chain's 75 enqueues. With `everyEvent`, as the backend issues them (each asking for its
// event, the last one kept); without, asking for no event but the chain's last: what a
// pre-decoded batch would issue.
void enqueueChain75(benchmark::State& state, bool everyEvent) {
    const DirectOpenCL* cl = directOpenCL(state);
    if (cl == nullptr) return;
    SvmMemory src(*cl, kChainBytes), dst(*cl, kChainBytes);
    LastCommand last;
    int64_t queued = 0;
    for (auto _ : state) {
        for (int round = 0; round < kChainRounds; ++round) {
            const auto value = static_cast<unsigned char>(round);
            cl_event event = nullptr;
            checkCl(clEnqueueSVMMemFill(cl->queue, dst.pointer, &value, 1, kChainBytes, 0, nullptr,
                                        everyEvent ? &event : nullptr),
                    "clEnqueueSVMMemFill");
            if (event != nullptr) last.replace(event);
            event = nullptr;
            checkCl(clEnqueueSVMMemcpy(cl->queue, CL_FALSE, dst.pointer, src.pointer, kChainBytes,
                                       0, nullptr, everyEvent ? &event : nullptr),
                    "clEnqueueSVMMemcpy");
            if (event != nullptr) last.replace(event);
            event = nullptr;
            const bool lastOfChain = round + 1 == kChainRounds;
            cl->enqueueEmptyKernel(dst.pointer, everyEvent || lastOfChain ? &event : nullptr);
            if (event != nullptr) last.replace(event);
        }
        drainPeriodically(
            state, queued, [&] { cl->finish(cl->queue); }, kChainDrainInterval);
    }
    cl->finish(cl->queue);
    state.SetItemsProcessed(state.iterations() * kChainRounds * 3);
}

void BM_Chain75_Enqueued_OpenCL(benchmark::State& state) {
    enqueueChain75(state, true);
}
BENCHMARK(BM_Chain75_Enqueued_OpenCL);

void BM_Chain75_Batch_OpenCL(benchmark::State& state) {
    enqueueChain75(state, false);
}
BENCHMARK(BM_Chain75_Batch_OpenCL);

// The chain recorded once, each command after the previous one (a sync point each), with a
// kernel object of its own per launch (arguments stay as they were set when it was recorded),
// enqueued whole while earlier runs may be pending (simultaneous use).
void BM_Chain75_CommandBuffer_OpenCL(benchmark::State& state) {
    const DirectOpenCL* cl = directOpenCL(state);
    if (cl == nullptr) return;
    const CommandBufferApi api(cl->device);
    if (!hasExtension(cl->device, "cl_khr_command_buffer") || !api.complete()) {
        state.SkipWithError("the OpenCL device has no cl_khr_command_buffer");
        return;
    }
    SvmBuffer src(*cl, kChainBytes), dst(*cl, kChainBytes);
    const cl_command_buffer_properties_khr properties[] = {
        CL_COMMAND_BUFFER_FLAGS_KHR, CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0};
    cl_int error = CL_SUCCESS;
    cl_command_buffer_khr buffer = api.create(1, &cl->queue, properties, &error);
    checkCl(error, "clCreateCommandBufferKHR");
    std::vector<cl_kernel> kernels;
    cl_sync_point_khr previous = 0;
    const auto after = [&previous] { return previous != 0 ? 1u : 0u; };
    const auto waitFor = [&previous]() -> const cl_sync_point_khr* {
        return previous != 0 ? &previous : nullptr;
    };
    for (int round = 0; round < kChainRounds; ++round) {
        const auto value = static_cast<unsigned char>(round);
        cl_sync_point_khr point = 0;
        checkCl(api.fill(buffer, nullptr, dst.buffer, &value, 1, 0, kChainBytes, after(), waitFor(),
                         &point, nullptr),
                "clCommandFillBufferKHR");
        previous = point;
        checkCl(api.copy(buffer, nullptr, src.buffer, dst.buffer, 0, 0, kChainBytes, after(),
                         waitFor(), &point, nullptr),
                "clCommandCopyBufferKHR");
        previous = point;
        cl_kernel kernel = clCloneKernel(cl->emptyKernel, &error);
        checkCl(error, "clCloneKernel");
        kernels.push_back(kernel);
        checkCl(clSetKernelArgSVMPointer(kernel, 0, dst.svm.pointer), "clSetKernelArgSVMPointer");
        checkCl(clSetKernelArg(kernel, 1, sizeof kEmptyKernelCount, &kEmptyKernelCount),
                "clSetKernelArg");
        checkCl(api.kernel(buffer, nullptr, nullptr, kernel, 3, nullptr, kOneWorkItem, kOneWorkItem,
                           after(), waitFor(), &point, nullptr),
                "clCommandNDRangeKernelKHR");
        previous = point;
    }
    checkCl(api.finalize(buffer), "clFinalizeCommandBufferKHR");
    LastCommand last;
    int64_t queued = 0;
    for (auto _ : state) {
        cl_event event = nullptr;
        checkCl(api.enqueue(0, nullptr, buffer, 0, nullptr, &event), "clEnqueueCommandBufferKHR");
        last.replace(event);
        drainPeriodically(
            state, queued, [&] { cl->finish(cl->queue); }, kChainDrainInterval);
    }
    cl->finish(cl->queue);
    api.release(buffer);
    for (cl_kernel kernel : kernels) clReleaseKernel(kernel);
    state.SetItemsProcessed(state.iterations() * kChainRounds * 3);
}
BENCHMARK(BM_Chain75_CommandBuffer_OpenCL);

}  // namespace

int main(int argc, char** argv) {
    return polyhal::bench::runBenchmarks(argc, argv, kBackends);
}
