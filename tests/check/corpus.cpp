// The race detector's corpus: stream-ordered programs with their synchronisation (correct) and
// with it removed (racy), each run as its own process under POLYHAL_CHECK=races,api.
//
// Usage: polyhal-check-corpus <program> racy|correct
// Runs the program and prints "<program> <variant>: <n> finding(s)"; exits 1 when a racy
// program found nothing or a correct one found anything. CTest also matches each racy program's
// report against the pair of operations it must name (tests/check/CMakeLists.txt). The leak
// programs' findings come at exit, after that line: CTest alone judges them. Kernel programs
// load the backend's conformance kernels from POLYHAL_CHECK_CORPUS_KERNELS.
#include <polyhal/hal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>

namespace {

constexpr size_t kBytes = 4096;

void require(halError status, const char* what) {
    if (status != HAL_SUCCESS) {
        std::fprintf(stderr, "corpus: %s failed: %s (%s)\n", what, halGetErrorName(status),
                     halGetLastErrorMessage());
        std::exit(2);
    }
}
#define REQUIRE_OK(call) require((call), #call)

// What every program starts from: three streams, two events, device buffers A and B and pinned
// host buffers H and G, all initialised and idle.
struct Setup {
    halStream s1 = nullptr, s2 = nullptr, s3 = nullptr;
    halEvent e1 = nullptr, e2 = nullptr;
    void* a = nullptr;
    void* b = nullptr;
    void* h = nullptr;
    void* g = nullptr;

    Setup() {
        REQUIRE_OK(halCreateStream(&s1));
        REQUIRE_OK(halCreateStream(&s2));
        REQUIRE_OK(halCreateStream(&s3));
        REQUIRE_OK(halCreateEventWithFlag(&e1, HAL_EVENT_DISABLE_TIMING));
        REQUIRE_OK(halCreateEventWithFlag(&e2, HAL_EVENT_DISABLE_TIMING));
        REQUIRE_OK(halMalloc(&a, kBytes));
        REQUIRE_OK(halMalloc(&b, kBytes));
        REQUIRE_OK(halMallocHost(&h, kBytes));
        REQUIRE_OK(halMallocHost(&g, kBytes));
        std::memset(h, 1, kBytes);
        std::memset(g, 2, kBytes);
        REQUIRE_OK(halMemset(a, kBytes, 0, kBytes));
        REQUIRE_OK(halMemset(b, kBytes, 0, kBytes));
        // For name_streams.cmake, which writes the reports with these names.
        std::fprintf(stderr, "corpus streams: s1 %p s2 %p s3 %p\n", static_cast<void*>(s1),
                     static_cast<void*>(s2), static_cast<void*>(s3));
    }
    ~Setup() {
        REQUIRE_OK(halSynchronizeDevice());
        REQUIRE_OK(halFree(a));
        REQUIRE_OK(halFree(b));
        REQUIRE_OK(halFreeHost(h));
        REQUIRE_OK(halFreeHost(g));
        REQUIRE_OK(halDestroyEvent(e1));
        REQUIRE_OK(halDestroyEvent(e2));
        REQUIRE_OK(halDestroyStream(s1));
        REQUIRE_OK(halDestroyStream(s2));
        REQUIRE_OK(halDestroyStream(s3));
    }

    // `waiter` waits for what `signaller` has submitted so far, through `event`.
    void order(halStream waiter, halStream signaller, halEvent event) {
        REQUIRE_OK(halRecordEvent(event, signaller));
        REQUIRE_OK(halStreamWaitEvent(waiter, event));
    }
};

void copy(void* dst, const void* src, size_t bytes, halStream stream) {
    REQUIRE_OK(halMemcpyAsync(dst, bytes, src, bytes, HAL_MEMCPY_DEFAULT, stream));
}
// A copy out of a block polyhal no longer knows (freed): the direction cannot be inferred.
void copyFromFreed(void* dst, const void* src, size_t bytes, halStream stream) {
    REQUIRE_OK(halMemcpyAsync(dst, bytes, src, bytes, HAL_MEMCPY_DEVICE_TO_DEVICE, stream));
}
void set(void* dst, size_t bytes, halStream stream) {
    REQUIRE_OK(halMemsetAsync(dst, bytes, 7, bytes, stream));
}
void* at(void* base, size_t offset) {
    return static_cast<unsigned char*>(base) + offset;
}

// The conformance suite's vadd(a, b, c, n) kernel (c[i] = a[i] + b[i]) over kBytes of floats.
struct Vadd {
    halModule module = nullptr;
    halFunction function = nullptr;
    uint32_t n = kBytes / sizeof(float);

    Vadd() {
        const char* image = std::getenv("POLYHAL_CHECK_CORPUS_KERNELS");
        if (image == nullptr) {
            std::fprintf(stderr, "corpus: POLYHAL_CHECK_CORPUS_KERNELS names no kernel image\n");
            std::exit(2);
        }
        REQUIRE_OK(halModuleLoadFile(&module, image));
        REQUIRE_OK(halModuleGetFunction(&function, module, "vadd"));
    }
    ~Vadd() { REQUIRE_OK(halModuleUnload(module)); }

    // c = a + b on `stream`; `declared`: a and b read-only, c write-only (else all read+write).
    void launch(void* a, void* b, void* c, halStream stream, bool declared) const {
        const halKernelArg args[] = {
            {&a, sizeof a}, {&b, sizeof b}, {&c, sizeof c}, {&n, sizeof n}};
        const halKernelArgAccess access[] = {HAL_KERNEL_ARG_READ_ONLY, HAL_KERNEL_ARG_READ_ONLY,
                                             HAL_KERNEL_ARG_WRITE_ONLY, HAL_KERNEL_ARG_NO_ACCESS};
        const halDim3 grid{n / 256, 1, 1}, block{256, 1, 1};
        if (declared) {
            REQUIRE_OK(
                halLaunchKernelWithAccess(function, grid, block, 0, args, access, 4, stream));
        } else {
            REQUIRE_OK(halLaunchKernel(function, grid, block, 0, args, 4, stream));
        }
    }

    // c = a + b over `bytes` from `offset` of each buffer, on `stream`, each pointer argument
    // declared with its extent: the slice of the buffers this launch touches.
    void launchSlice(void* a, void* b, void* c, size_t offset, size_t bytes,
                     halStream stream) const {
        void* aSlice = at(a, offset);
        void* bSlice = at(b, offset);
        void* cSlice = at(c, offset);
        const uint32_t count = static_cast<uint32_t>(bytes / sizeof(float));
        const halKernelArg args[] = {{&aSlice, sizeof aSlice},
                                     {&bSlice, sizeof bSlice},
                                     {&cSlice, sizeof cSlice},
                                     {&count, sizeof count}};
        const halKernelArgUse uses[] = {{HAL_KERNEL_ARG_READ_ONLY, bytes},
                                        {HAL_KERNEL_ARG_READ_ONLY, bytes},
                                        {HAL_KERNEL_ARG_WRITE_ONLY, bytes},
                                        {HAL_KERNEL_ARG_NO_ACCESS, 0}};
        const halDim3 grid{count / 256, 1, 1}, block{256, 1, 1};
        REQUIRE_OK(halLaunchKernelWithUses(function, grid, block, 0, args, uses, 4, stream));
    }

    // The kernel over no elements, so it touches nothing; `declared`: every argument declared
    // HAL_KERNEL_ARG_NO_ACCESS (else all read+write).
    void launchEmpty(void* a, void* b, void* c, halStream stream, bool declared) const {
        const uint32_t none = 0;
        const halKernelArg args[] = {
            {&a, sizeof a}, {&b, sizeof b}, {&c, sizeof c}, {&none, sizeof none}};
        const halKernelArgAccess access[] = {HAL_KERNEL_ARG_NO_ACCESS, HAL_KERNEL_ARG_NO_ACCESS,
                                             HAL_KERNEL_ARG_NO_ACCESS, HAL_KERNEL_ARG_NO_ACCESS};
        const halDim3 grid{1, 1, 1}, block{1, 1, 1};
        if (declared) {
            REQUIRE_OK(
                halLaunchKernelWithAccess(function, grid, block, 0, args, access, 4, stream));
        } else {
            REQUIRE_OK(halLaunchKernel(function, grid, block, 0, args, 4, stream));
        }
    }
};

// A graph of what `record` enqueues on `stream` while it captures.
halGraph captureGraph(halStream stream, const std::function<void()>& record) {
    REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    record();
    halGraph graph = nullptr;
    REQUIRE_OK(halStreamEndCapture(stream, &graph));
    return graph;
}

void raiseFlag(void* flag) {
    static_cast<std::atomic<bool>*>(flag)->store(true, std::memory_order_release);
}

void notPermittedProbe(void* result) {
    void* scratch = nullptr;
    *static_cast<halError*>(result) = halMallocAsync(&scratch, 64, nullptr);
}
void permittedProbe(void* result) {
    int count = 0;
    *static_cast<halError*>(result) = halGetDeviceCount(&count);
}

// Each program takes `synchronised`: false removes the synchronisation that makes it correct.
using Program = std::function<void(bool synchronised)>;

const std::map<std::string, Program>& programs() {
    static const std::map<std::string, Program> all = {
        // AscendCL's stream-waits-event sample: the producer's stream records, the consumer's
        // stream waits, then reads.
        {"ascend_wait_event",
         [](bool synchronised) {
             Setup s;
             set(s.a, kBytes, s.s1);
             REQUIRE_OK(halRecordEvent(s.e1, s.s1));
             if (synchronised) REQUIRE_OK(halStreamWaitEvent(s.s2, s.e1));
             copy(s.b, s.a, kBytes, s.s2);
         }},
        // MindSpore's cross-stream read: an upload on one stream read by another.
        {"mindspore_cross_stream_read",
         [](bool synchronised) {
             Setup s;
             copy(s.a, s.h, kBytes, s.s1);
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             copy(s.g, s.a, kBytes, s.s2);
         }},
        // PyTorch's side stream: work queued on the default stream, then a side stream that
        // must wait_stream() the default one before it reads.
        {"torch_side_stream",
         [](bool synchronised) {
             Setup s;
             set(s.a, kBytes, nullptr);
             if (synchronised) s.order(s.s1, nullptr, s.e1);
             copy(s.b, s.a, kBytes, s.s1);
         }},
        // ... and the default stream reading what the side stream produced.
        {"torch_side_stream_join",
         [](bool synchronised) {
             Setup s;
             set(s.b, kBytes, s.s1);
             if (synchronised) s.order(nullptr, s.s1, s.e1);
             copy(s.g, s.b, kBytes, nullptr);
         }},
        // CUDA code written for the legacy default stream, both ways round: a side stream reads
        // what the default stream wrote, and the default stream reads what the side stream
        // wrote. Correct under halSetDefaultStreamMode(HAL_DEFAULT_STREAM_LEGACY), whose implicit
        // waits the detector must see; racy, with the switch named, without it.
        {"legacy_default_stream_assumed",
         [](bool synchronised) {
             if (synchronised) REQUIRE_OK(halSetDefaultStreamMode(HAL_DEFAULT_STREAM_LEGACY));
             Setup s;
             set(s.a, kBytes, nullptr);
             copy(s.b, s.a, kBytes, s.s1);
             copy(s.g, s.b, kBytes, nullptr);
         }},
        // Write after read: a stream overwrites what another still copies out.
        {"war_copy_then_memset",
         [](bool synchronised) {
             Setup s;
             copy(s.b, s.a, kBytes, s.s1);
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             set(s.a, kBytes, s.s2);
         }},
        {"war_download_then_upload",
         [](bool synchronised) {
             Setup s;
             copy(s.g, s.a, kBytes, s.s1);
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             copy(s.a, s.h, kBytes, s.s2);
         }},
        // Write after write.
        {"waw_memset",
         [](bool synchronised) {
             Setup s;
             set(s.a, kBytes, s.s1);
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             set(s.a, kBytes, s.s2);
         }},
        {"waw_upload",
         [](bool synchronised) {
             Setup s;
             copy(s.a, s.h, kBytes, s.s1);
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             copy(s.a, s.g, kBytes, s.s2);
         }},
        // Overlapping, not equal, ranges.
        {"waw_partial_overlap",
         [](bool synchronised) {
             Setup s;
             set(s.a, 256, s.s1);
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             set(at(s.a, 128), 256, s.s2);
         }},
        // A chain over three streams: s1 -> s2 -> s3, with its last link missing.
        {"chain_three_streams_last_link",
         [](bool synchronised) {
             Setup s;
             set(s.a, kBytes, s.s1);
             s.order(s.s2, s.s1, s.e1);
             set(s.b, kBytes, s.s2);
             if (synchronised) s.order(s.s3, s.s2, s.e2);
             copy(s.g, s.a, kBytes, s.s3);
         }},
        // ... with its first link missing: s3 follows s2, which never waited for s1.
        {"chain_three_streams_first_link",
         [](bool synchronised) {
             Setup s;
             set(s.a, kBytes, s.s1);
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             set(s.b, kBytes, s.s2);
             s.order(s.s3, s.s2, s.e2);
             copy(s.g, s.a, kBytes, s.s3);
         }},
        // The event recorded before the write it should cover.
        {"event_recorded_too_early",
         [](bool synchronised) {
             Setup s;
             if (!synchronised) REQUIRE_OK(halRecordEvent(s.e1, s.s1));
             set(s.a, kBytes, s.s1);
             if (synchronised) REQUIRE_OK(halRecordEvent(s.e1, s.s1));
             REQUIRE_OK(halStreamWaitEvent(s.s2, s.e1));
             copy(s.b, s.a, kBytes, s.s2);
         }},
        // The event recorded on the wrong stream.
        {"event_recorded_on_wrong_stream",
         [](bool synchronised) {
             Setup s;
             set(s.a, kBytes, s.s1);
             REQUIRE_OK(halRecordEvent(s.e1, synchronised ? s.s1 : s.s3));
             REQUIRE_OK(halStreamWaitEvent(s.s2, s.e1));
             copy(s.b, s.a, kBytes, s.s2);
         }},
        // The host synchronises with the producer before submitting the consumer.
        {"stream_synchronize_missing",
         [](bool synchronised) {
             Setup s;
             copy(s.a, s.h, kBytes, s.s1);
             if (synchronised) REQUIRE_OK(halSynchronizeStream(s.s1));
             copy(s.g, s.a, kBytes, s.s2);
         }},
        {"event_synchronize_missing",
         [](bool synchronised) {
             Setup s;
             set(s.a, kBytes, s.s1);
             REQUIRE_OK(halRecordEvent(s.e1, s.s1));
             if (synchronised) REQUIRE_OK(halSynchronizeEvent(s.e1));
             set(s.a, kBytes, s.s2);
         }},
        {"device_synchronize_missing",
         [](bool synchronised) {
             Setup s;
             copy(s.b, s.a, kBytes, s.s1);
             if (synchronised) REQUIRE_OK(halSynchronizeDevice());
             set(s.a, kBytes, s.s2);
         }},
        // Polling an event until it is complete orders what it captured.
        {"event_query_missing",
         [](bool synchronised) {
             Setup s;
             set(s.a, kBytes, s.s1);
             REQUIRE_OK(halRecordEvent(s.e1, s.s1));
             while (synchronised && halQueryEvent(s.e1) == HAL_ERROR_NOT_READY) {
             }
             set(s.a, kBytes, s.s2);
         }},
        // An event recorded again captures the new point only: a wait after the second record,
        // made on an idle stream, orders nothing with the first.
        {"event_rerecorded",
         [](bool synchronised) {
             Setup s;
             set(s.a, kBytes, s.s1);
             REQUIRE_OK(halRecordEvent(s.e1, s.s1));
             if (!synchronised) REQUIRE_OK(halRecordEvent(s.e1, s.s3));
             REQUIRE_OK(halStreamWaitEvent(s.s2, s.e1));
             copy(s.b, s.a, kBytes, s.s2);
         }},
        // A device synchronisation covers the work of streams already destroyed.
        {"destroyed_stream_device_synchronize",
         [](bool synchronised) {
             Setup s;
             halStream gone = nullptr;
             REQUIRE_OK(halCreateStream(&gone));
             set(s.a, kBytes, gone);
             REQUIRE_OK(halDestroyStream(gone));
             if (synchronised) REQUIRE_OK(halSynchronizeDevice());
             set(s.a, kBytes, s.s2);
         }},
        // Polling the producer until it is idle orders it as a synchronisation does.
        {"stream_query_missing",
         [](bool synchronised) {
             Setup s;
             set(s.a, kBytes, s.s1);
             while (synchronised && halQueryStream(s.s1) == HAL_ERROR_NOT_READY) {
             }
             copy(s.b, s.a, kBytes, s.s2);
         }},
        // A host function is an ordering point: once it has run (the host saw its flag), the
        // work before it on its stream is over (CUDA's host-callback signalling pattern).
        {"host_function_flag",
         [](bool synchronised) {
             Setup s;
             set(s.a, kBytes, s.s1);
             if (synchronised) {
                 std::atomic<bool> ran{false};
                 REQUIRE_OK(halLaunchHostFunc(s.s1, raiseFlag, &ran));
                 while (!ran.load(std::memory_order_acquire)) {
                 }
             }
             set(s.a, kBytes, s.s2);
         }},
        // A block the pool hands out again on the same stream: its earlier use on that stream
        // is ordered before another stream's only through the allocation.
        {"pool_reuse_same_stream",
         [](bool synchronised) {
             Setup s;
             void* first = nullptr;
             void* second = nullptr;
             REQUIRE_OK(halMallocAsync(&first, kBytes, s.s1));
             set(first, kBytes, s.s1);
             REQUIRE_OK(halFreeAsync(first, s.s1));
             REQUIRE_OK(halMallocAsync(&second, kBytes, s.s1));
             if (second != first) std::exit(3);  // the pool reuses a block freed on its stream
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             set(second, kBytes, s.s2);
             REQUIRE_OK(halSynchronizeDevice());
             REQUIRE_OK(halFreeAsync(second, s.s1));
         }},
        // The synchronous memset of pinned memory runs after the default stream's work only.
        {"pinned_memset_sync",
         [](bool synchronised) {
             Setup s;
             copy(s.h, s.a, kBytes, s.s1);
             if (synchronised) REQUIRE_OK(halSynchronizeStream(s.s1));
             REQUIRE_OK(halMemset(s.h, kBytes, 0, kBytes));
         }},
        // Managed memory between two streams: one sets it, another copies it to the device.
        // The device's uses are checked as for device memory (the host's are not seen).
        {"managed_between_streams",
         [](bool synchronised) {
             Setup s;
             void* managed = nullptr;
             REQUIRE_OK(halMallocManaged(&managed, kBytes, 0));
             REQUIRE_OK(halMemsetAsync(managed, kBytes, 7, kBytes, s.s1));
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             copy(s.a, managed, kBytes, s.s2);
             REQUIRE_OK(halSynchronizeDevice());
             REQUIRE_OK(halFree(managed));
         }},
        // Pinned host memory between two streams: one downloads into it, another uploads it.
        {"pinned_host_staging",
         [](bool synchronised) {
             Setup s;
             copy(s.h, s.a, kBytes, s.s1);
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             copy(s.b, s.h, kBytes, s.s2);
         }},
        // A 2-D copy's rows written by one stream, read by another.
        {"copy_2d_rows",
         [](bool synchronised) {
             Setup s;
             REQUIRE_OK(halMemcpy2DAsync(s.a, 128, s.h, 64, 64, 16, HAL_MEMCPY_DEFAULT, s.s1));
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             copy(s.g, at(s.a, 256), 64, s.s2);
         }},
        // Use after free: a stream-ordered free, then another stream still uses the block.
        {"use_after_free_async",
         [](bool synchronised) {
             Setup s;
             void* scratch = nullptr;
             REQUIRE_OK(halMallocAsync(&scratch, kBytes, s.s1));
             set(scratch, kBytes, s.s1);
             if (synchronised) {
                 s.order(s.s2, s.s1, s.e1);
                 copy(s.b, scratch, kBytes, s.s2);
                 s.order(s.s1, s.s2, s.e2);
             }
             REQUIRE_OK(halFreeAsync(scratch, s.s1));
             if (!synchronised) copyFromFreed(s.b, scratch, kBytes, s.s2);
         }},
        // ... and after halFree.
        {"use_after_free",
         [](bool synchronised) {
             Setup s;
             void* scratch = nullptr;
             REQUIRE_OK(halMalloc(&scratch, kBytes));
             if (synchronised) copy(s.b, scratch, kBytes, s.s1);
             REQUIRE_OK(halSynchronizeStream(s.s1));
             REQUIRE_OK(halFree(scratch));
             if (!synchronised) copyFromFreed(s.b, scratch, kBytes, s.s1);
         }},
        // A graph's write read by another stream: a launch is one operation of its stream,
        // ordered as any other.
        {"graph_launch_read_unordered",
         [](bool synchronised) {
             Setup s;
             const halGraph graph = captureGraph(s.s1, [&] { set(s.a, kBytes, s.s1); });
             REQUIRE_OK(halGraphLaunch(graph, s.s1));
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             copy(s.b, s.a, kBytes, s.s2);
             REQUIRE_OK(halGraphDestroy(graph));
         }},
        // Kernels: PyTorch's side-stream pattern with a kernel producing what another stream
        // downloads.
        {"kernel_output_downloaded",
         [](bool synchronised) {
             Setup s;
             Vadd vadd;
             vadd.launch(s.a, s.a, s.b, s.s1, true);
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             copy(s.g, s.b, kBytes, s.s2);
         }},
        // Two launches of graphs writing the same block: launches of one graph follow each
        // other whatever their streams, launches of two graphs do not.
        {"graph_relaunch_other_stream",
         [](bool synchronised) {
             Setup s;
             const halGraph first = captureGraph(s.s1, [&] { set(s.a, kBytes, s.s1); });
             const halGraph second = captureGraph(s.s2, [&] { set(s.a, kBytes, s.s2); });
             REQUIRE_OK(halGraphLaunch(first, s.s1));
             REQUIRE_OK(halGraphLaunch(synchronised ? first : second, s.s2));
             REQUIRE_OK(halGraphDestroy(first));
             REQUIRE_OK(halGraphDestroy(second));
         }},
        // Two graphs whose kernels share their inputs: the launches keep the kernels' declared
        // accesses, so only the output they share is a race.
        {"kernel_graph_shared_inputs",
         [](bool synchronised) {
             Setup s;
             void* c1 = nullptr;
             void* c2 = nullptr;
             REQUIRE_OK(halMalloc(&c1, kBytes));
             REQUIRE_OK(halMalloc(&c2, kBytes));
             Vadd vadd;
             const halGraph first =
                 captureGraph(s.s1, [&] { vadd.launch(s.a, s.b, c1, s.s1, true); });
             const halGraph second = captureGraph(
                 s.s2, [&] { vadd.launch(s.a, s.b, synchronised ? c2 : c1, s.s2, true); });
             REQUIRE_OK(halGraphLaunch(first, s.s1));
             REQUIRE_OK(halGraphLaunch(second, s.s2));
             REQUIRE_OK(halSynchronizeDevice());
             REQUIRE_OK(halGraphDestroy(first));
             REQUIRE_OK(halGraphDestroy(second));
             REQUIRE_OK(halFree(c1));
             REQUIRE_OK(halFree(c2));
         }},
        // Two kernels on unordered streams sharing their inputs: only the declaration that they
        // read them makes that correct in the detector's eyes (halLaunchKernel's arguments are
        // read+write).
        {"kernel_shared_inputs",
         [](bool synchronised) {
             Setup s;
             void* c1 = nullptr;
             void* c2 = nullptr;
             REQUIRE_OK(halMalloc(&c1, kBytes));
             REQUIRE_OK(halMalloc(&c2, kBytes));
             Vadd vadd;
             vadd.launch(s.a, s.b, c1, s.s1, synchronised);
             vadd.launch(s.a, s.b, c2, s.s2, synchronised);
             REQUIRE_OK(halSynchronizeDevice());
             REQUIRE_OK(halFree(c1));
             REQUIRE_OK(halFree(c2));
         }},
        // A kernel overwriting the input another stream's kernel still reads.
        {"kernel_war",
         [](bool synchronised) {
             Setup s;
             void* c = nullptr;
             REQUIRE_OK(halMalloc(&c, kBytes));
             Vadd vadd;
             vadd.launch(s.a, s.a, c, s.s1, true);
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             vadd.launch(s.b, s.b, s.a, s.s2, true);
             REQUIRE_OK(halSynchronizeDevice());
             REQUIRE_OK(halFree(c));
         }},
        // One buffer split between two streams, each kernel writing its own half (CUDA's
        // simpleHyperQ and simpleStreams pattern), then downloaded whole on the second stream:
        // with the extents declared, only the missing wait for the first half is a race.
        {"kernel_partitioned",
         [](bool synchronised) {
             Setup s;
             void* c = nullptr;
             REQUIRE_OK(halMalloc(&c, kBytes));
             Vadd vadd;
             vadd.launchSlice(s.a, s.b, c, 0, kBytes / 2, s.s1);
             vadd.launchSlice(s.a, s.b, c, kBytes / 2, kBytes / 2, s.s2);
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             copy(s.h, c, kBytes, s.s2);
             REQUIRE_OK(halSynchronizeDevice());
             REQUIRE_OK(halFree(c));
         }},
        // The same split captured: each graph keeps its launch's extents.
        {"kernel_partitioned_graph",
         [](bool synchronised) {
             Setup s;
             void* c = nullptr;
             REQUIRE_OK(halMalloc(&c, kBytes));
             Vadd vadd;
             halGraph first =
                 captureGraph(s.s1, [&] { vadd.launchSlice(s.a, s.b, c, 0, kBytes / 2, s.s1); });
             halGraph second = captureGraph(
                 s.s2, [&] { vadd.launchSlice(s.a, s.b, c, kBytes / 2, kBytes / 2, s.s2); });
             REQUIRE_OK(halGraphLaunch(first, s.s1));
             REQUIRE_OK(halGraphLaunch(second, s.s2));
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             copy(s.h, c, kBytes, s.s2);
             REQUIRE_OK(halSynchronizeDevice());
             REQUIRE_OK(halGraphDestroy(first));
             REQUIRE_OK(halGraphDestroy(second));
             REQUIRE_OK(halFree(c));
         }},
        // A kernel declaring every argument HAL_KERNEL_ARG_NO_ACCESS touches none of them.
        {"kernel_no_access",
         [](bool synchronised) {
             Setup s;
             Vadd vadd;
             vadd.launchEmpty(s.a, s.b, s.a, s.s1, synchronised);
             set(s.a, kBytes, s.s2);
             REQUIRE_OK(halSynchronizeDevice());
         }},
        // Two devices: a device-1 stream overwriting pinned memory orders nothing between
        // device 0's streams (device 1's stream is synchronised in both variants).
        {"multi_device_pinned",
         [](bool synchronised) {
             Setup s;
             copy(s.h, s.a, kBytes, s.s1);
             if (synchronised) REQUIRE_OK(halSynchronizeStream(s.s1));
             REQUIRE_OK(halSetDevice(1));
             halStream other = nullptr;
             REQUIRE_OK(halCreateStream(&other));
             set(s.h, kBytes, other);
             REQUIRE_OK(halSynchronizeStream(other));
             REQUIRE_OK(halDestroyStream(other));
             REQUIRE_OK(halSetDevice(0));
             copy(s.b, s.h, kBytes, s.s2);
         }},
        // A read racing with two earlier writes, to two halves of one block: reported with each.
        {"two_earlier_writers",
         [](bool synchronised) {
             Setup s;
             set(s.a, kBytes / 2, s.s1);
             set(at(s.a, kBytes / 2), kBytes / 2, s.s2);
             if (synchronised) {
                 s.order(s.s3, s.s1, s.e1);
                 s.order(s.s3, s.s2, s.e2);
             }
             copy(s.b, s.a, kBytes, s.s3);
         }},
        // halCheckSetCallSite: a binding's call site is quoted in the reports of the calls made
        // while it is set, and no longer once cleared with NULL.
        {"call_site_cleared",
         [](bool synchronised) {
             Setup s;
             REQUIRE_OK(halCheckSetCallSite("app.py:7 in step()"));
             set(s.a, kBytes, s.s1);
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             set(s.a, kBytes, s.s2);
             REQUIRE_OK(halCheckSetCallSite(nullptr));
             set(s.b, kBytes, s.s1);
             if (synchronised) s.order(s.s2, s.s1, s.e1);
             set(s.b, kBytes, s.s2);
         }},
        // api: a wait for an event that was never recorded orders nothing. Querying and
        // synchronising one is legal (it is complete) and reported in neither variant.
        {"api_wait_unrecorded_event",
         [](bool synchronised) {
             Setup s;
             REQUIRE_OK(halQueryEvent(s.e2));
             REQUIRE_OK(halSynchronizeEvent(s.e2));
             if (synchronised) REQUIRE_OK(halRecordEvent(s.e1, s.s1));
             REQUIRE_OK(halStreamWaitEvent(s.s2, s.e1));
         }},
        // api: a host function calling into the device, which hal.h forbids.
        {"api_call_in_host_function",
         [](bool synchronised) {
             Setup s;
             halError result = HAL_ERROR_UNKNOWN;
             REQUIRE_OK(halLaunchHostFunc(s.s1, synchronised ? permittedProbe : notPermittedProbe,
                                          &result));
             REQUIRE_OK(halSynchronizeStream(s.s1));
             if (result != (synchronised ? HAL_SUCCESS : HAL_ERROR_NOT_PERMITTED)) std::exit(3);
         }},
        // leaks: a stream and a block never released (reported at exit).
        {"leak_stream_and_block",
         [](bool synchronised) {
             halStream stream = nullptr;
             void* block = nullptr;
             REQUIRE_OK(halCreateStream(&stream));
             REQUIRE_OK(halMallocAsync(&block, 256, stream));
             if (synchronised) {
                 REQUIRE_OK(halFreeAsync(block, stream));
                 REQUIRE_OK(halDestroyStream(stream));
             }
         }},
    };
    return all;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 || programs().count(argv[1]) == 0 ||
        (std::strcmp(argv[2], "racy") != 0 && std::strcmp(argv[2], "correct") != 0)) {
        std::fprintf(stderr, "usage: %s <program> racy|correct\nprograms:", argv[0]);
        for (const auto& entry : programs()) std::fprintf(stderr, " %s", entry.first.c_str());
        std::fprintf(stderr, "\n");
        return 2;
    }
    const bool racy = std::strcmp(argv[2], "racy") == 0;
    uint32_t checks = 0;
    REQUIRE_OK(halCheckGetEnabled(&checks));
    if ((checks & HAL_CHECK_RACES) == 0) {
        std::fprintf(stderr, "corpus: run with POLYHAL_CHECK=races\n");
        return 2;
    }
    programs().at(argv[1])(!racy);
    uint64_t findings = 0;
    REQUIRE_OK(halCheckGetFindingCount(&findings));
    std::fflush(stderr);
    std::printf("%s %s: %llu finding(s)\n", argv[1], argv[2],
                static_cast<unsigned long long>(findings));
    std::fflush(stdout);  // before the leak report, written at exit
    const bool atExit = std::strncmp(argv[1], "leak_", 5) == 0;
    return (racy && !atExit ? findings > 0 : findings == 0) ? 0 : 1;
}
