// Each rule of the libcuda.so.1 double fires: a deliberately wrong call sequence, run in a child
// process, ends it with the rule named (or gets the result the driver returns).
#include <cuda.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "death_test.hpp"
#include "rules.hpp"

using polyhal::doubles::ChildOutcome;
using polyhal::doubles::kBreachExitCode;
using polyhal::doubles::runBesideSecondProcess;
using polyhal::doubles::runInChild;

namespace {

// The child's driver calls must succeed up to the wrong one; a failure here ends it with 1.
void require(CUresult result) {
    if (result != CUDA_SUCCESS) std::_Exit(1);
}

// A device of the double with its primary context current.
CUcontext useDevice(int ordinal) {
    require(cuInit(0));
    CUcontext context = nullptr;
    require(cuDevicePrimaryCtxRetain(&context, ordinal));
    require(cuCtxPushCurrent(context));
    return context;
}

constexpr const char* kPtx =
    ".version 8.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry fill_u32(.param .u64 out, .param .u32 value, .param .u32 n)\n{\n ret;\n}\n";

CUfunction fillKernel() {
    CUmodule module = nullptr;
    require(cuModuleLoadDataEx(&module, kPtx, 0, nullptr, nullptr));
    CUfunction function = nullptr;
    require(cuModuleGetFunction(&function, module, "fill_u32"));
    return function;
}

void requireBreach(const ChildOutcome& outcome, const char* rule) {
    INFO("child stderr: " << outcome.stderrText);
    CHECK(outcome.exitCode == kBreachExitCode);
    CHECK_THAT(outcome.stderrText,
               Catch::Contains("CUDA driver double: rule broken: ") && Catch::Contains(rule));
}

}  // namespace

TEST_CASE("a call that acts in a context needs a current one", "[cuda_double][rules]") {
    requireBreach(runInChild([] {
                      require(cuInit(0));
                      CUstream stream = nullptr;
                      cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, 0);
                  }),
                  "cuStreamCreateWithPriority called with no current context");
}

TEST_CASE("a handle is used only while its own context is current", "[cuda_double][rules]") {
    setenv("POLYHAL_CUDA_DOUBLE_DEVICES", "2", 1);
    requireBreach(runInChild([] {
                      useDevice(0);
                      CUstream stream = nullptr;
                      require(cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, 0));
                      CUcontext other = nullptr;
                      require(cuDevicePrimaryCtxRetain(&other, 1));
                      require(cuCtxSetCurrent(other));
                      cuStreamQuery(stream);
                  }),
                  "cuStreamQuery: the stream belongs to the context of device 0, but the context "
                  "of device 1 is current");
    requireBreach(runInChild([] {
                      useDevice(0);
                      CUdeviceptr memory = 0;
                      require(cuMemAlloc(&memory, 256));
                      CUcontext other = nullptr;
                      require(cuDevicePrimaryCtxRetain(&other, 1));
                      require(cuCtxSetCurrent(other));
                      cuMemFree(memory);
                  }),
                  "is memory of another device than the current context's");
}

TEST_CASE("a destroyed handle, or one of a released context, is not used", "[cuda_double][rules]") {
    requireBreach(runInChild([] {
                      useDevice(0);
                      CUevent event = nullptr;
                      require(cuEventCreate(&event, 0));
                      require(cuEventDestroy(event));
                      cuEventQuery(event);
                  }),
                  "cuEventQuery: CUevent");
    requireBreach(runInChild([] {
                      useDevice(0);
                      CUstream stream = nullptr;
                      require(cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, 0));
                      CUcontext popped = nullptr;
                      require(cuCtxPopCurrent(&popped));
                      require(cuDevicePrimaryCtxRelease(0));
                      CUcontext again = useDevice(0);
                      (void)again;
                      cuStreamSynchronize(stream);
                  }),
                  "is not alive");
    requireBreach(runInChild([] {
                      require(cuInit(0));
                      cuDevicePrimaryCtxRelease(0);
                  }),
                  "primary context is not retained");
}

TEST_CASE("no driver call from inside a host function", "[cuda_double][rules]") {
    requireBreach(runInChild([] {
                      useDevice(0);
                      static CUstream stream = nullptr;
                      require(cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, 0));
                      require(cuLaunchHostFunc(
                          stream, [](void*) { cuStreamQuery(stream); }, nullptr));
                      cuStreamSynchronize(stream);
                  }),
                  "cuStreamQuery called from inside a host function");
}

// Stream-ordered frees are documented for stream-ordered allocations only; cuMemFreeAsync of
// cuMemAlloc memory synchronises as cuMemFree does (memory.cpp). The host function holds its
// stream for a bounded time (a gate would have to be opened from inside the call under test): a
// free that synchronised returns after it, one that did not returns while it holds.
TEST_CASE("cuMemFreeAsync of cuMemAlloc memory synchronises the context", "[cuda_double][rules]") {
    const ChildOutcome outcome = runInChild([] {
        static std::atomic<bool> released{false};
        useDevice(0);
        CUstream held = nullptr;
        CUstream freeing = nullptr;
        require(cuStreamCreateWithPriority(&held, CU_STREAM_NON_BLOCKING, 0));
        require(cuStreamCreateWithPriority(&freeing, CU_STREAM_NON_BLOCKING, 0));
        CUdeviceptr memory = 0;
        require(cuMemAlloc(&memory, 4096));
        require(cuLaunchHostFunc(
            held,
            [](void*) {
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
                released = true;
            },
            nullptr));
        require(cuMemFreeAsync(memory, freeing));
        std::_Exit(released ? 0 : 3);
    });
    CHECK(outcome.exitCode == 0);
}

// Streams beyond CUDA_DEVICE_MAX_CONNECTIONS share a hardware queue (timeline.hpp): a stream held
// by a host function holds the work submitted after it to another stream of its queue, and only
// that. The host function holds until the test opens it or a deadline passes (a gate would have
// to be opened from inside the synchronisation under test): 100 ms where the other stream must
// wait for it, 5 s where it must not.
TEST_CASE(
    "streams beyond CUDA_DEVICE_MAX_CONNECTIONS share a queue, and a held stream holds the "
    "others",
    "[cuda_double][rules]") {
    for (const char* connections : {"1", "2"}) {
        const bool shared = std::string(connections) == "1";
        INFO("CUDA_DEVICE_MAX_CONNECTIONS=" << connections);
        const ChildOutcome outcome = runInChild([connections, shared] {
            static std::atomic<bool> open{false};
            static std::atomic<bool> released{false};
            static std::chrono::milliseconds hold{shared ? 100 : 5000};
            setenv("CUDA_DEVICE_MAX_CONNECTIONS", connections, 1);
            useDevice(0);
            CUstream held = nullptr;
            CUstream other = nullptr;
            require(cuStreamCreateWithPriority(&held, CU_STREAM_NON_BLOCKING, 0));
            require(cuStreamCreateWithPriority(&other, CU_STREAM_NON_BLOCKING, 0));
            CUdeviceptr memory = 0;
            require(cuMemAlloc(&memory, 64));
            require(cuLaunchHostFunc(
                held,
                [](void*) {
                    const auto deadline = std::chrono::steady_clock::now() + hold;
                    while (!open && std::chrono::steady_clock::now() < deadline) {
                        std::this_thread::yield();
                    }
                    released = true;
                },
                nullptr));
            require(cuMemsetD8Async(memory, 0, 64, other));
            require(cuStreamSynchronize(other));
            const bool waited = released;
            open = true;
            require(cuCtxSynchronize());
            std::_Exit(waited == shared ? 0 : 3);
        });
        CHECK(outcome.exitCode == 0);
    }
}

TEST_CASE("kernel parameters match the kernel's declared parameters", "[cuda_double][rules]") {
    requireBreach(runInChild([] {
                      useDevice(0);
                      CUfunction fill = fillKernel();
                      CUstream stream = nullptr;
                      require(cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, 0));
                      cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr);
                  }),
                  "fill_u32 declares 3 parameters but kernelParams is NULL");
    requireBreach(runInChild([] {
                      useDevice(0);
                      CUfunction fill = fillKernel();
                      CUstream stream = nullptr;
                      require(cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, 0));
                      // The value where the output pointer belongs.
                      uint64_t value = 7;
                      uint32_t n = 32;
                      void* params[] = {&value, &n, &n};
                      cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, stream, params, nullptr);
                  }),
                  "parameter 0 of fill_u32 is a pointer, but holds 0x7");
}

TEST_CASE("a kernel reaches another device's memory only once peer access is enabled",
          "[cuda_double][rules]") {
    const auto launchOnPeerMemory = [](bool enable) {
        return runInChild([enable] {
            require(cuInit(0));
            CUcontext peer = nullptr;
            require(cuDevicePrimaryCtxRetain(&peer, 1));
            require(cuCtxPushCurrent(peer));
            CUdeviceptr memory = 0;
            require(cuMemAlloc(&memory, 128));
            CUcontext popped = nullptr;
            require(cuCtxPopCurrent(&popped));
            useDevice(0);
            if (enable) require(cuCtxEnablePeerAccess(peer, 0));
            CUfunction fill = fillKernel();
            CUstream stream = nullptr;
            require(cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, 0));
            uint32_t value = 7, n = 32;
            void* params[] = {&memory, &value, &n};
            require(cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, stream, params, nullptr));
            require(cuStreamSynchronize(stream));
        });
    };
    requireBreach(launchOnPeerMemory(false), "peer access not enabled");
    const ChildOutcome enabled = launchOnPeerMemory(true);
    INFO("child stderr: " << enabled.stderrText);
    CHECK(enabled.exitCode == 0);
}

TEST_CASE("the driver's results for what it refuses", "[cuda_double][rules]") {
    // A memset of pageable host memory is refused, as the driver refuses it.
    const ChildOutcome memset = runInChild([] {
        useDevice(0);
        CUstream stream = nullptr;
        require(cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, 0));
        static unsigned char pageable[64];
        std::_Exit(cuMemsetD8Async(reinterpret_cast<uintptr_t>(pageable), 0, sizeof pageable,
                                   stream) == CUDA_ERROR_INVALID_VALUE
                       ? 0
                       : 2);
    });
    CHECK(memset.exitCode == 0);
    // Dynamic shared memory above 48 KiB needs the kernel to opt in first.
    const ChildOutcome shared = runInChild([] {
        useDevice(0);
        CUfunction fill = fillKernel();
        CUstream stream = nullptr;
        require(cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, 0));
        CUdeviceptr out = 0;
        require(cuMemAlloc(&out, 128));
        uint32_t n = 32;
        void* params[] = {&out, &n, &n};
        if (cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 64 * 1024, stream, params, nullptr) !=
            CUDA_ERROR_INVALID_VALUE) {
            std::_Exit(2);
        }
        require(
            cuFuncSetAttribute(fill, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024));
        require(cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 64 * 1024, stream, params, nullptr));
        require(cuStreamSynchronize(stream));
    });
    CHECK(shared.exitCode == 0);
}

TEST_CASE("host code touching device memory faults at once", "[cuda_double][rules]") {
    const ChildOutcome outcome = runInChild([] {
        useDevice(0);
        CUdeviceptr memory = 0;
        require(cuMemAlloc(&memory, 256));
        *reinterpret_cast<volatile unsigned char*>(static_cast<uintptr_t>(memory)) = 1;
    });
    INFO("child stderr: " << outcome.stderrText);
    CHECK(outcome.signal == SIGSEGV);
}

TEST_CASE(
    "IPC: only an allocation's base is exported, only opened memory closed, the handle not "
    "opened where it was made",
    "[cuda_double][rules][ipc]") {
    requireBreach(runInChild([] {
                      useDevice(0);
                      CUdeviceptr memory = 0;
                      require(cuMemAlloc(&memory, 4096));
                      CUipcMemHandle handle;
                      cuIpcGetMemHandle(&handle, memory + 256);
                  }),
                  "not the base of a live cuMemAlloc allocation");
    requireBreach(runInChild([] {
                      useDevice(0);
                      CUdeviceptr memory = 0;
                      require(cuMemAlloc(&memory, 4096));
                      cuIpcCloseMemHandle(memory);
                  }),
                  "was not opened with cuIpcOpenMemHandle");
    requireBreach(runInChild([] {
                      useDevice(0);
                      CUdeviceptr memory = 0;
                      require(cuMemAlloc(&memory, 4096));
                      CUipcMemHandle handle;
                      require(cuIpcGetMemHandle(&handle, memory));
                      CUdeviceptr opened = 0;
                      cuIpcOpenMemHandle(&opened, handle, 0);
                  }),
                  "CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS");
    const ChildOutcome sameProcess = runInChild([] {
        useDevice(0);
        CUdeviceptr memory = 0;
        require(cuMemAlloc(&memory, 4096));
        CUipcMemHandle handle;
        require(cuIpcGetMemHandle(&handle, memory));
        CUdeviceptr opened = 0;
        std::_Exit(cuIpcOpenMemHandle(&opened, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) ==
                           CUDA_ERROR_INVALID_CONTEXT
                       ? 0
                       : 3);
    });
    INFO("child stderr: " << sameProcess.stderrText);
    CHECK(sameProcess.exitCode == 0);
}

TEST_CASE(
    "IPC events: only an interprocess event is exported, an opened event is not used once its "
    "exporter destroyed it, and the driver refuses what it documents",
    "[cuda_double][rules][ipc]") {
    requireBreach(runInChild([] {
                      useDevice(0);
                      CUevent event = nullptr;
                      require(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
                      CUipcEventHandle handle;
                      cuIpcGetEventHandle(&handle, event);
                  }),
                  "created without CU_EVENT_INTERPROCESS");
    requireBreach(
        runInChild([] {
            useDevice(0);
            CUevent event = nullptr;
            require(cuEventCreate(&event, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
            CUipcEventHandle handle;
            require(cuIpcGetEventHandle(&handle, event));
            runBesideSecondProcess(
                [&](const std::function<void()>& waitForFirst) {
                    CUevent opened = nullptr;
                    require(cuIpcOpenEventHandle(&opened, handle));
                    waitForFirst();
                    cuEventQuery(opened);
                },
                [&] { require(cuEventDestroy(event)); });
        }),
        "the exporting process has destroyed it");
    const ChildOutcome refused = runInChild([] {
        useDevice(0);
        CUevent event = nullptr;
        if (cuEventCreate(&event, CU_EVENT_INTERPROCESS) != CUDA_ERROR_INVALID_VALUE) {
            std::_Exit(3);
        }
        require(cuEventCreate(&event, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
        CUipcEventHandle handle;
        require(cuIpcGetEventHandle(&handle, event));
        CUevent opened = nullptr;
        std::_Exit(cuIpcOpenEventHandle(&opened, handle) == CUDA_ERROR_INVALID_CONTEXT ? 0 : 4);
    });
    INFO("child stderr: " << refused.stderrText);
    CHECK(refused.exitCode == 0);
}

TEST_CASE("IPC events: a record in one process is what a wait in the other sees",
          "[cuda_double][ipc]") {
    const ChildOutcome outcome = runInChild([] {
        useDevice(0);
        CUevent event = nullptr;
        require(cuEventCreate(&event, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
        CUipcEventHandle handle;
        require(cuIpcGetEventHandle(&handle, event));
        CUstream stream = nullptr;
        require(cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, 0));
        // The record waits behind a host function that holds the stream until released.
        static std::atomic<bool> release{false};
        require(cuLaunchHostFunc(
            stream,
            [](void*) {
                while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            },
            nullptr));
        require(cuEventRecord(event, stream));
        runBesideSecondProcess(
            [&](const std::function<void()>& waitForFirst) {
                CUevent opened = nullptr;
                require(cuIpcOpenEventHandle(&opened, handle));
                if (cuEventQuery(opened) != CUDA_ERROR_NOT_READY) std::_Exit(5);
                waitForFirst();
                require(cuEventSynchronize(opened));
                require(cuEventQuery(opened));
                require(cuEventDestroy(opened));
            },
            [&] {
                release = true;
                require(cuStreamSynchronize(stream));
            });
    });
    INFO("child stderr: " << outcome.stderrText);
    CHECK(outcome.exitCode == 0);
}

// ---- Graphs ----

namespace {

CUgraphNode addMemset(CUgraph graph, const CUgraphNode* after, size_t count, CUdeviceptr dst,
                      size_t bytes, unsigned char value, CUcontext context) {
    CUDA_MEMSET_NODE_PARAMS params{};
    params.dst = dst;
    params.value = value;
    params.elementSize = 1;
    params.width = bytes;
    params.height = 1;
    CUgraphNode node = nullptr;
    require(cuGraphAddMemsetNode(&node, graph, after, count, &params, context));
    return node;
}

CUgraphExec instantiate(CUgraph graph) {
    CUgraphExec exec = nullptr;
    require(cuGraphInstantiate(&exec, graph, 0));
    return exec;
}

CUstream newStream() {
    CUstream stream = nullptr;
    require(cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, 0));
    return stream;
}

}  // namespace

TEST_CASE("a node depends only on nodes of its own graph, each listed once",
          "[cuda_double][rules][graph]") {
    requireBreach(runInChild([] {
                      CUcontext context = useDevice(0);
                      CUdeviceptr memory = 0;
                      require(cuMemAlloc(&memory, 64));
                      CUgraph first = nullptr;
                      CUgraph second = nullptr;
                      require(cuGraphCreate(&first, 0));
                      require(cuGraphCreate(&second, 0));
                      CUgraphNode foreign = addMemset(first, nullptr, 0, memory, 64, 1, context);
                      addMemset(second, &foreign, 1, memory, 64, 2, context);
                  }),
                  "cuGraphAddMemsetNode: dependency 0 is not a node of this graph");
    requireBreach(runInChild([] {
                      CUcontext context = useDevice(0);
                      CUdeviceptr memory = 0;
                      require(cuMemAlloc(&memory, 64));
                      CUgraph graph = nullptr;
                      require(cuGraphCreate(&graph, 0));
                      CUgraphNode node = addMemset(graph, nullptr, 0, memory, 64, 1, context);
                      const CUgraphNode twice[] = {node, node};
                      addMemset(graph, twice, 2, memory, 64, 2, context);
                  }),
                  "dependency 1 is listed twice");
}

TEST_CASE("a destroyed executable or graph is not used", "[cuda_double][rules][graph]") {
    requireBreach(runInChild([] {
                      CUcontext context = useDevice(0);
                      CUdeviceptr memory = 0;
                      require(cuMemAlloc(&memory, 64));
                      CUgraph graph = nullptr;
                      require(cuGraphCreate(&graph, 0));
                      addMemset(graph, nullptr, 0, memory, 64, 1, context);
                      CUgraphExec exec = instantiate(graph);
                      require(cuGraphExecDestroy(exec));
                      cuGraphLaunch(exec, newStream());
                  }),
                  "cuGraphLaunch: CUgraphExec");
    requireBreach(runInChild([] {
                      CUcontext context = useDevice(0);
                      CUdeviceptr memory = 0;
                      require(cuMemAlloc(&memory, 64));
                      CUgraph graph = nullptr;
                      require(cuGraphCreate(&graph, 0));
                      require(cuGraphDestroy(graph));
                      addMemset(graph, nullptr, 0, memory, 64, 1, context);
                  }),
                  "cuGraphAddMemsetNode: CUgraph");
}

TEST_CASE("an executable runs on a stream of its nodes' context", "[cuda_double][rules][graph]") {
    setenv("POLYHAL_CUDA_DOUBLE_DEVICES", "2", 1);
    requireBreach(runInChild([] {
                      CUcontext context = useDevice(0);
                      CUdeviceptr memory = 0;
                      require(cuMemAlloc(&memory, 64));
                      CUgraph graph = nullptr;
                      require(cuGraphCreate(&graph, 0));
                      addMemset(graph, nullptr, 0, memory, 64, 1, context);
                      CUgraphExec exec = instantiate(graph);
                      CUcontext other = nullptr;
                      require(cuDevicePrimaryCtxRetain(&other, 1));
                      require(cuCtxSetCurrent(other));
                      cuGraphLaunch(exec, newStream());
                  }),
                  "cuGraphLaunch: node 0 of the executable runs in another context than the "
                  "stream's (device 1)");
}

TEST_CASE("no driver call from inside a host node", "[cuda_double][rules][graph]") {
    requireBreach(runInChild([] {
                      useDevice(0);
                      static CUstream stream = newStream();
                      CUgraph graph = nullptr;
                      require(cuGraphCreate(&graph, 0));
                      CUDA_HOST_NODE_PARAMS host{};
                      host.fn = [](void*) { cuStreamQuery(stream); };
                      CUgraphNode node = nullptr;
                      require(cuGraphAddHostNode(&node, graph, nullptr, 0, &host));
                      require(cuGraphLaunch(instantiate(graph), stream));
                      cuStreamSynchronize(stream);
                  }),
                  "cuStreamQuery called from inside a host function");
}

TEST_CASE("a kernel node keeps the argument values it was added with",
          "[cuda_double][rules][graph]") {
    const ChildOutcome outcome = runInChild([] {
        useDevice(0);
        CUfunction fill = fillKernel();
        CUstream stream = newStream();
        CUdeviceptr out = 0;
        require(cuMemAlloc(&out, 32 * sizeof(uint32_t)));
        CUgraph graph = nullptr;
        require(cuGraphCreate(&graph, 0));
        {
            // The argument storage is gone (overwritten) before the launch.
            CUdeviceptr pointer = out;
            uint32_t value = 7;
            uint32_t n = 32;
            void* params[] = {&pointer, &value, &n};
            CUDA_KERNEL_NODE_PARAMS kernel{};
            kernel.func = fill;
            kernel.gridDimX = kernel.gridDimY = kernel.gridDimZ = 1;
            kernel.blockDimX = 32;
            kernel.blockDimY = kernel.blockDimZ = 1;
            kernel.kernelParams = params;
            CUgraphNode node = nullptr;
            require(cuGraphAddKernelNode(&node, graph, nullptr, 0, &kernel));
            pointer = 0;
            value = 9;
            n = 0;
        }
        require(cuGraphLaunch(instantiate(graph), stream));
        uint32_t host[32] = {};
        require(cuMemcpyAsync(reinterpret_cast<uintptr_t>(host), out, sizeof host, stream));
        require(cuStreamSynchronize(stream));
        for (uint32_t word : host) {
            if (word != 7) std::_Exit(2);
        }
    });
    INFO("child stderr: " << outcome.stderrText);
    CHECK(outcome.exitCode == 0);
}

TEST_CASE(
    "a user object's destructor runs once, after its graph, its executables and their "
    "launches are gone",
    "[cuda_double][rules][graph]") {
    const ChildOutcome outcome = runInChild([] {
        useDevice(0);
        static std::atomic<int> destroyed{0};
        static std::atomic<bool> open{false};
        CUstream stream = newStream();
        CUgraph graph = nullptr;
        require(cuGraphCreate(&graph, 0));
        CUDA_HOST_NODE_PARAMS hold{};
        hold.fn = [](void*) {
            while (!open) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        };
        CUgraphNode node = nullptr;
        require(cuGraphAddHostNode(&node, graph, nullptr, 0, &hold));
        CUuserObject object = nullptr;
        require(cuUserObjectCreate(
            &object, nullptr, [](void*) { ++destroyed; }, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
        require(cuGraphRetainUserObject(graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE));
        CUgraphExec exec = instantiate(graph);
        require(cuGraphDestroy(graph));
        require(cuGraphLaunch(exec, stream));
        require(cuGraphExecDestroy(exec));  // the launch still holds it
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (destroyed != 0) std::_Exit(2);
        open = true;
        require(cuStreamSynchronize(stream));
        polyhal::doubles::exitOnceCounted(destroyed, 1);
    });
    INFO("child stderr: " << outcome.stderrText);
    CHECK(outcome.exitCode == 0);
}

TEST_CASE("user objects: what the driver refuses", "[cuda_double][rules][graph]") {
    // CU_USER_OBJECT_NO_DESTRUCTOR_SYNC is required.
    const ChildOutcome flags = runInChild([] {
        useDevice(0);
        CUuserObject object = nullptr;
        std::_Exit(cuUserObjectCreate(
                       &object, nullptr, [](void*) {}, 1, 0) == CUDA_ERROR_INVALID_VALUE
                       ? 0
                       : 2);
    });
    CHECK(flags.exitCode == 0);
    // A memset node of pageable host memory, as cuMemsetD8 refuses it.
    const ChildOutcome memset = runInChild([] {
        CUcontext context = useDevice(0);
        static unsigned char pageable[64];
        CUgraph graph = nullptr;
        require(cuGraphCreate(&graph, 0));
        CUDA_MEMSET_NODE_PARAMS params{};
        params.dst = reinterpret_cast<uintptr_t>(pageable);
        params.elementSize = 1;
        params.width = sizeof pageable;
        params.height = 1;
        CUgraphNode node = nullptr;
        std::_Exit(cuGraphAddMemsetNode(&node, graph, nullptr, 0, &params, context) ==
                           CUDA_ERROR_INVALID_VALUE
                       ? 0
                       : 2);
    });
    CHECK(memset.exitCode == 0);
    requireBreach(runInChild([] {
                      useDevice(0);
                      CUuserObject object = nullptr;
                      require(cuUserObjectCreate(
                          &object, nullptr, [](void*) {}, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
                      cuUserObjectRelease(object, 2);
                  }),
                  "cuUserObjectRelease: 2 references released, more than the application holds");
    // References moved to a graph are the graph's to release.
    requireBreach(runInChild([] {
                      useDevice(0);
                      CUuserObject object = nullptr;
                      require(cuUserObjectCreate(
                          &object, nullptr, [](void*) {}, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
                      CUgraph graph = nullptr;
                      require(cuGraphCreate(&graph, 0));
                      require(cuGraphRetainUserObject(graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE));
                      cuUserObjectRelease(object, 1);
                  }),
                  "cuUserObjectRelease: 1 references released, more than the application holds");
    requireBreach(runInChild([] {
                      useDevice(0);
                      CUuserObject object = nullptr;
                      require(cuUserObjectCreate(
                          &object, nullptr, [](void*) {}, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
                      CUgraph graph = nullptr;
                      require(cuGraphCreate(&graph, 0));
                      cuGraphRetainUserObject(graph, object, 2, CU_GRAPH_USER_OBJECT_MOVE);
                  }),
                  "cuGraphRetainUserObject: 2 references moved, more than the application holds");
}

// While one thread captures in global mode, another thread's potentially unsafe call (here
// cuStreamQuery of a stream of its own) fails and invalidates the capture, unless that thread
// relaxed its interaction mode first.
TEST_CASE("a global capture refuses other threads' unsafe calls unless they are relaxed",
          "[cuda_double][rules][capture]") {
    for (const bool relaxed : {false, true}) {
        INFO("the other thread relaxed: " << relaxed);
        const ChildOutcome outcome = runInChild([relaxed] {
            CUcontext context = useDevice(0);
            CUstream captured = nullptr;
            CUstream other = nullptr;
            require(cuStreamCreateWithPriority(&captured, CU_STREAM_NON_BLOCKING, 0));
            require(cuStreamCreateWithPriority(&other, CU_STREAM_NON_BLOCKING, 0));
            require(cuStreamBeginCapture(captured, CU_STREAM_CAPTURE_MODE_GLOBAL));
            CUresult query = CUDA_SUCCESS;
            std::thread([&] {
                require(cuCtxSetCurrent(context));
                if (relaxed) {
                    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
                    require(cuThreadExchangeStreamCaptureMode(&mode));
                }
                query = cuStreamQuery(other);
            }).join();
            CUgraph graph = nullptr;
            const CUresult ended = cuStreamEndCapture(captured, &graph);
            const bool expected =
                relaxed ? query == CUDA_SUCCESS && ended == CUDA_SUCCESS && graph != nullptr
                        : query == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED &&
                              ended == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
            std::_Exit(expected ? 0 : 2);
        });
        CHECK(outcome.exitCode == 0);
    }
}
