// Each rule of the libamdhip64.so double fires: a deliberately wrong call sequence, run in a
// child process, ends it with the rule named (or gets the result the runtime returns).
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#ifndef __HIP_DISABLE_CPP_FUNCTIONS__
#define __HIP_DISABLE_CPP_FUNCTIONS__
#endif
#include <hip/hip_runtime_api.h>

#include "hip/user_objects.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>

#include "death_test.hpp"
#include "rules.hpp"

using polyhal::doubles::ChildOutcome;
using polyhal::doubles::kBreachExitCode;
using polyhal::doubles::runBesideSecondProcess;
using polyhal::doubles::runInChild;

namespace {

void require(hipError_t result) {
    if (result != hipSuccess) std::_Exit(1);
}

hipStream_t newStream() {
    hipStream_t stream = nullptr;
    require(hipStreamCreateWithPriority(&stream, hipStreamNonBlocking, 0));
    return stream;
}

void requireBreach(const ChildOutcome& outcome, const char* rule) {
    INFO("child stderr: " << outcome.stderrText);
    CHECK(outcome.exitCode == kBreachExitCode);
    CHECK_THAT(outcome.stderrText,
               Catch::Contains("HIP driver double: rule broken: ") && Catch::Contains(rule));
}

}  // namespace

TEST_CASE("no runtime call from inside a stream callback", "[hip_double][rules]") {
    requireBreach(
        runInChild([] {
            static hipStream_t stream = newStream();
            require(hipStreamAddCallback(
                stream, [](hipStream_t, hipError_t, void*) { (void)hipStreamQuery(stream); },
                nullptr, 0));
            (void)hipStreamSynchronize(stream);
        }),
        "hipStreamQuery called from inside a stream callback");
}

TEST_CASE("a destroyed handle is not used", "[hip_double][rules]") {
    requireBreach(runInChild([] {
                      hipStream_t stream = newStream();
                      require(hipStreamDestroy(stream));
                      (void)hipStreamQuery(stream);
                  }),
                  "hipStreamQuery: hipStream_t");
}

TEST_CASE("an event is not queried once the stream of its last record is destroyed",
          "[hip_double][rules]") {
    requireBreach(runInChild([] {
                      hipStream_t stream = newStream();
                      hipEvent_t event = nullptr;
                      require(hipEventCreateWithFlags(&event, hipEventDisableTiming));
                      require(hipEventRecord(event, stream));
                      require(hipStreamSynchronize(stream));
                      require(hipStreamDestroy(stream));
                      (void)hipEventQuery(event);
                  }),
                  "hipEventQuery: the event's last record was on a stream destroyed since");
    requireBreach(runInChild([] {
                      hipStream_t stream = newStream();
                      hipEvent_t event = nullptr;
                      require(hipEventCreateWithFlags(&event, hipEventDisableTiming));
                      require(hipEventRecord(event, stream));
                      require(hipStreamDestroy(stream));
                      (void)hipEventSynchronize(event);
                  }),
                  "hipEventSynchronize: the event's last record was on a stream destroyed since");
}

TEST_CASE("an event is recorded on a stream of its own device", "[hip_double][rules]") {
    requireBreach(runInChild([] {
                      hipEvent_t event = nullptr;
                      require(hipEventCreateWithFlags(&event, 0));
                      require(hipSetDevice(1));
                      hipStream_t stream = newStream();
                      (void)hipEventRecord(event, stream);
                  }),
                  "hipEventRecord: the event is of device 0, the stream of device 1");
}

TEST_CASE("a peer copy names the devices its pointers belong to", "[hip_double][rules]") {
    requireBreach(runInChild([] {
                      void* first = nullptr;
                      void* second = nullptr;
                      require(hipMalloc(&first, 256));
                      require(hipSetDevice(1));
                      require(hipMalloc(&second, 256));
                      (void)hipMemcpyPeerAsync(second, 0, first, 0, 256, newStream());
                  }),
                  "the destination is of device 1, dstDevice of device 0");
}

TEST_CASE("the runtime's results for what it refuses", "[hip_double][rules]") {
    const ChildOutcome outcome = runInChild([] {
        hipStream_t stream = newStream();
        void* device = nullptr;
        require(hipMalloc(&device, 64));
        static unsigned char pageable[64];
        // A memset of pageable host memory, and a copy whose direction is not where its
        // pointers lie.
        if (hipMemsetD8Async(pageable, 0, sizeof pageable, stream) != hipErrorInvalidValue) {
            std::_Exit(2);
        }
        if (hipMemcpyAsync(device, pageable, 64, hipMemcpyDeviceToHost, stream) !=
            hipErrorInvalidMemcpyDirection) {
            std::_Exit(3);
        }
    });
    CHECK(outcome.exitCode == 0);
}

// clr releases in stream order only memory of a HIP memory pool; hipFreeAsync of hipMalloc memory
// waits for every stream of the device first (memory.cpp). The callback holds its stream for a
// bounded time (a gate would have to be opened from inside the call under test): a free that
// waited returns after it, one that did not returns while it holds.
TEST_CASE("hipFreeAsync of hipMalloc memory waits for every stream of the device",
          "[hip_double][rules]") {
    const ChildOutcome outcome = runInChild([] {
        static std::atomic<bool> released{false};
        hipStream_t held = newStream();
        hipStream_t freeing = newStream();
        void* memory = nullptr;
        require(hipMalloc(&memory, 4096));
        require(hipStreamAddCallback(
            held,
            [](hipStream_t, hipError_t, void*) {
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
                released = true;
            },
            nullptr, 0));
        require(hipFreeAsync(memory, freeing));
        std::_Exit(released ? 0 : 3);
    });
    CHECK(outcome.exitCode == 0);
}

// Streams beyond GPU_MAX_HW_QUEUES share a hardware queue (timeline.hpp): a stream held by a
// callback holds the work submitted after it to another stream of its queue, and only that. The
// callback holds until the test opens it or a deadline passes (a gate would have to be opened
// from inside the synchronisation under test): 100 ms where the other stream must wait for it,
// 5 s where it must not.
TEST_CASE("streams beyond GPU_MAX_HW_QUEUES share a queue, and a held stream holds the others",
          "[hip_double][rules]") {
    for (const char* queues : {"1", "2"}) {
        const bool shared = std::string(queues) == "1";
        INFO("GPU_MAX_HW_QUEUES=" << queues);
        const ChildOutcome outcome = runInChild([queues, shared] {
            static std::atomic<bool> open{false};
            static std::atomic<bool> released{false};
            static std::chrono::milliseconds hold{shared ? 100 : 5000};
            setenv("GPU_MAX_HW_QUEUES", queues, 1);
            hipStream_t held = newStream();
            hipStream_t other = newStream();
            void* memory = nullptr;
            require(hipMalloc(&memory, 64));
            require(hipStreamAddCallback(
                held,
                [](hipStream_t, hipError_t, void*) {
                    const auto deadline = std::chrono::steady_clock::now() + hold;
                    while (!open && std::chrono::steady_clock::now() < deadline) {
                        std::this_thread::yield();
                    }
                    released = true;
                },
                nullptr, 0));
            require(hipMemsetD8Async(memory, 0, 64, other));
            require(hipStreamSynchronize(other));
            const bool waited = released;
            open = true;
            require(hipDeviceSynchronize());
            std::_Exit(waited == shared ? 0 : 3);
        });
        CHECK(outcome.exitCode == 0);
    }
}

TEST_CASE(
    "IPC: only an allocation's base is exported, only opened memory closed, the handle not "
    "opened where it was made",
    "[hip_double][rules][ipc]") {
    requireBreach(runInChild([] {
                      void* memory = nullptr;
                      require(hipMalloc(&memory, 4096));
                      hipIpcMemHandle_t handle;
                      (void)hipIpcGetMemHandle(&handle, static_cast<char*>(memory) + 256);
                  }),
                  "not the base of a live hipMalloc allocation");
    requireBreach(runInChild([] {
                      void* memory = nullptr;
                      require(hipMalloc(&memory, 4096));
                      (void)hipIpcCloseMemHandle(memory);
                  }),
                  "was not opened with hipIpcOpenMemHandle");
    const ChildOutcome sameProcess = runInChild([] {
        void* memory = nullptr;
        require(hipMalloc(&memory, 4096));
        hipIpcMemHandle_t handle;
        require(hipIpcGetMemHandle(&handle, memory));
        void* opened = nullptr;
        std::_Exit(hipIpcOpenMemHandle(&opened, handle, hipIpcMemLazyEnablePeerAccess) ==
                           hipErrorInvalidContext
                       ? 0
                       : 3);
    });
    INFO("child stderr: " << sameProcess.stderrText);
    CHECK(sameProcess.exitCode == 0);
}

TEST_CASE(
    "IPC events: only an interprocess event is exported, an opened event is not used once its "
    "exporter destroyed it, and the runtime refuses what it documents",
    "[hip_double][rules][ipc]") {
    requireBreach(runInChild([] {
                      hipEvent_t event = nullptr;
                      require(hipEventCreateWithFlags(&event, hipEventDisableTiming));
                      hipIpcEventHandle_t handle;
                      (void)hipIpcGetEventHandle(&handle, event);
                  }),
                  "created without hipEventInterprocess");
    requireBreach(
        runInChild([] {
            hipEvent_t event = nullptr;
            require(hipEventCreateWithFlags(&event, hipEventInterprocess | hipEventDisableTiming));
            hipIpcEventHandle_t handle;
            require(hipIpcGetEventHandle(&handle, event));
            runBesideSecondProcess(
                [&](const std::function<void()>& waitForFirst) {
                    hipEvent_t opened = nullptr;
                    require(hipIpcOpenEventHandle(&opened, handle));
                    waitForFirst();
                    (void)hipEventQuery(opened);
                },
                [&] { require(hipEventDestroy(event)); });
        }),
        "the exporting process has destroyed it");
    const ChildOutcome refused = runInChild([] {
        hipEvent_t event = nullptr;
        if (hipEventCreateWithFlags(&event, hipEventInterprocess) != hipErrorInvalidValue) {
            std::_Exit(3);
        }
        require(hipEventCreateWithFlags(&event, hipEventInterprocess | hipEventDisableTiming));
        hipIpcEventHandle_t handle;
        require(hipIpcGetEventHandle(&handle, event));
        hipEvent_t opened = nullptr;
        std::_Exit(hipIpcOpenEventHandle(&opened, handle) == hipErrorInvalidContext ? 0 : 4);
    });
    INFO("child stderr: " << refused.stderrText);
    CHECK(refused.exitCode == 0);
}

TEST_CASE("IPC events: a record in one process is what a wait in the other sees",
          "[hip_double][ipc]") {
    const ChildOutcome outcome = runInChild([] {
        hipEvent_t event = nullptr;
        require(hipEventCreateWithFlags(&event, hipEventInterprocess | hipEventDisableTiming));
        hipIpcEventHandle_t handle;
        require(hipIpcGetEventHandle(&handle, event));
        hipStream_t stream = newStream();
        // The record waits behind a callback that holds the stream until released.
        static std::atomic<bool> release{false};
        require(hipStreamAddCallback(
            stream,
            [](hipStream_t, hipError_t, void*) {
                while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            },
            nullptr, 0));
        require(hipEventRecord(event, stream));
        runBesideSecondProcess(
            [&](const std::function<void()>& waitForFirst) {
                hipEvent_t opened = nullptr;
                require(hipIpcOpenEventHandle(&opened, handle));
                if (hipEventQuery(opened) != hipErrorNotReady) std::_Exit(5);
                waitForFirst();
                require(hipEventSynchronize(opened));
                require(hipEventQuery(opened));
                require(hipEventDestroy(opened));
            },
            [&] {
                release = true;
                require(hipStreamSynchronize(stream));
            });
    });
    INFO("child stderr: " << outcome.stderrText);
    CHECK(outcome.exitCode == 0);
}

// ---- Graphs ----

namespace {

hipGraphNode_t addMemset(hipGraph_t graph, const hipGraphNode_t* after, size_t count, void* dst,
                         size_t bytes, unsigned char value) {
    hipMemsetParams params{};
    params.dst = dst;
    params.value = value;
    params.elementSize = 1;
    params.width = bytes;
    params.height = 1;
    hipGraphNode_t node = nullptr;
    require(hipGraphAddMemsetNode(&node, graph, after, count, &params));
    return node;
}

hipGraphExec_t instantiate(hipGraph_t graph) {
    hipGraphExec_t exec = nullptr;
    require(hipGraphInstantiateWithFlags(&exec, graph, 0));
    return exec;
}

}  // namespace

TEST_CASE("a node depends only on nodes of its own graph", "[hip_double][rules][graph]") {
    requireBreach(runInChild([] {
                      void* memory = nullptr;
                      require(hipMalloc(&memory, 64));
                      hipGraph_t first = nullptr;
                      hipGraph_t second = nullptr;
                      require(hipGraphCreate(&first, 0));
                      require(hipGraphCreate(&second, 0));
                      hipGraphNode_t foreign = addMemset(first, nullptr, 0, memory, 64, 1);
                      addMemset(second, &foreign, 1, memory, 64, 2);
                  }),
                  "hipGraphAddMemsetNode: dependency 0 is not a node of this graph");
}

TEST_CASE("an executable runs on a stream of its nodes' device", "[hip_double][rules][graph]") {
    requireBreach(runInChild([] {
                      void* memory = nullptr;
                      require(hipMalloc(&memory, 64));
                      hipGraph_t graph = nullptr;
                      require(hipGraphCreate(&graph, 0));
                      addMemset(graph, nullptr, 0, memory, 64, 1);
                      hipGraphExec_t exec = instantiate(graph);
                      require(hipSetDevice(1));
                      (void)hipGraphLaunch(exec, newStream());
                  }),
                  "hipGraphLaunch: node 0 of the executable is of another device than the "
                  "stream's (device 1)");
    requireBreach(runInChild([] {
                      hipGraph_t graph = nullptr;
                      require(hipGraphCreate(&graph, 0));
                      hipGraphExec_t exec = instantiate(graph);
                      require(hipGraphExecDestroy(exec));
                      (void)hipGraphLaunch(exec, newStream());
                  }),
                  "hipGraphLaunch: hipGraphExec_t");
}

TEST_CASE("no runtime call from inside a host node", "[hip_double][rules][graph]") {
    requireBreach(runInChild([] {
                      static hipStream_t stream = newStream();
                      hipGraph_t graph = nullptr;
                      require(hipGraphCreate(&graph, 0));
                      hipHostNodeParams host{};
                      host.fn = [](void*) { (void)hipStreamQuery(stream); };
                      hipGraphNode_t node = nullptr;
                      require(hipGraphAddHostNode(&node, graph, nullptr, 0, &host));
                      require(hipGraphLaunch(instantiate(graph), stream));
                      (void)hipStreamSynchronize(stream);
                  }),
                  "hipStreamQuery called from inside a stream callback");
}

TEST_CASE(
    "a graph's launches run its nodes in order, and its user object's destructor runs "
    "once they and the graph are gone",
    "[hip_double][rules][graph]") {
    const ChildOutcome outcome = runInChild([] {
        static std::atomic<int> destroyed{0};
        hipStream_t stream = newStream();
        void* device = nullptr;
        void* host = nullptr;
        require(hipMalloc(&device, 64));
        require(hipHostMalloc(&host, 64, 0));
        hipGraph_t graph = nullptr;
        require(hipGraphCreate(&graph, 0));
        hipGraphNode_t fill = addMemset(graph, nullptr, 0, device, 64, 0x42);
        hipGraphNode_t copy = nullptr;
        require(hipGraphAddMemcpyNode1D(&copy, graph, &fill, 1, host, device, 64,
                                        hipMemcpyDeviceToHost));
        hipUserObject_t object = nullptr;
        require(hipUserObjectCreate(
            &object, nullptr, [](void*) { ++destroyed; }, 1, hipUserObjectNoDestructorSync));
        require(hipGraphRetainUserObject(graph, object, 1, hipGraphUserObjectMove));
        hipGraphExec_t exec = instantiate(graph);
        require(hipGraphDestroy(graph));
        require(hipGraphLaunch(exec, stream));
        require(hipGraphLaunch(exec, stream));
        require(hipStreamSynchronize(stream));
        if (destroyed != 0) std::_Exit(3);
        require(hipGraphExecDestroy(exec));
        for (int i = 0; i < 64; ++i) {
            if (static_cast<unsigned char*>(host)[i] != 0x42) std::_Exit(2);
        }
        polyhal::doubles::exitOnceCounted(destroyed, 1);
    });
    INFO("child stderr: " << outcome.stderrText);
    CHECK(outcome.exitCode == 0);
}

TEST_CASE("an executable is destroyed only once its launches have completed",
          "[hip_double][rules][graph]") {
    requireBreach(runInChild([] {
                      static std::atomic<bool> open{false};
                      hipStream_t stream = newStream();
                      void* device = nullptr;
                      require(hipMalloc(&device, 64));
                      hipGraph_t graph = nullptr;
                      require(hipGraphCreate(&graph, 0));
                      addMemset(graph, nullptr, 0, device, 64, 1);
                      hipGraphExec_t exec = instantiate(graph);
                      // The stream is held until the destroy has been called.
                      require(hipStreamAddCallback(
                          stream,
                          [](hipStream_t, hipError_t, void*) {
                              while (!open) std::this_thread::yield();
                          },
                          nullptr, 0));
                      require(hipGraphLaunch(exec, stream));
                      (void)hipGraphExecDestroy(exec);
                      open = true;
                  }),
                  "hipGraphExecDestroy: a launch of the executable has not completed");
}

TEST_CASE("no host-to-host copy node", "[hip_double][rules][graph]") {
    requireBreach(
        runInChild([] {
            void* first = nullptr;
            void* second = nullptr;
            require(hipHostMalloc(&first, 64, 0));
            require(hipHostMalloc(&second, 64, 0));
            hipGraph_t graph = nullptr;
            require(hipGraphCreate(&graph, 0));
            hipGraphNode_t node = nullptr;
            (void)hipGraphAddMemcpyNode1D(&node, graph, nullptr, 0, first, second, 64,
                                          hipMemcpyHostToHost);
        }),
        "hipGraphAddMemcpyNode1D: a host-to-host copy node may run on the launching thread");
}

TEST_CASE("graphs: what the runtime refuses", "[hip_double][rules][graph]") {
    // A copy node's direction must match where its pointers lie, as hipMemcpy's.
    const ChildOutcome direction = runInChild([] {
        void* first = nullptr;
        void* second = nullptr;
        require(hipMalloc(&first, 64));
        require(hipMalloc(&second, 64));
        hipGraph_t graph = nullptr;
        require(hipGraphCreate(&graph, 0));
        hipGraphNode_t node = nullptr;
        std::_Exit(hipGraphAddMemcpyNode1D(&node, graph, nullptr, 0, first, second, 64,
                                           hipMemcpyHostToDevice) == hipErrorInvalidMemcpyDirection
                       ? 0
                       : 2);
    });
    CHECK(direction.exitCode == 0);
    // hipUserObjectNoDestructorSync is required.
    const ChildOutcome flags = runInChild([] {
        hipUserObject_t object = nullptr;
        std::_Exit(hipUserObjectCreate(
                       &object, nullptr, [](void*) {}, 1, 0) == hipErrorInvalidValue
                       ? 0
                       : 2);
    });
    CHECK(flags.exitCode == 0);
    // A kernel node names its arguments, an empty list for a kernel without any.
    const ChildOutcome arguments = runInChild([] {
        hipGraph_t graph = nullptr;
        require(hipGraphCreate(&graph, 0));
        hipKernelNodeParams kernel{};
        kernel.func = reinterpret_cast<void*>(&newStream);  // refused before it is looked at
        kernel.gridDim = dim3(1, 1, 1);
        kernel.blockDim = dim3(1, 1, 1);
        hipGraphNode_t node = nullptr;
        std::_Exit(hipGraphAddKernelNode(&node, graph, nullptr, 0, &kernel) == hipErrorInvalidValue
                       ? 0
                       : 2);
    });
    CHECK(arguments.exitCode == 0);
}

#ifdef POLYHAL_HIP_TEST_KERNELS
namespace {

std::string codeObjectBundle() {
    std::ifstream file(POLYHAL_HIP_TEST_KERNELS, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(file), {});
}

}  // namespace

// As clr loads them: the bundle entry of the device's architecture (a gfx90a), its kernels by the
// names its metadata gives; a bundle with no entry for the device is hipErrorNoBinaryForGpu.
TEST_CASE("a code object bundle is loaded for the device's architecture", "[hip_double][module]") {
    const ChildOutcome outcome = runInChild([] {
        std::string bundle = codeObjectBundle();
        if (bundle.find("amdgcn-amd-amdhsa--gfx90a") == std::string::npos) std::_Exit(2);
        hipModule_t module = nullptr;
        require(hipModuleLoadDataEx(&module, bundle.data(), 0, nullptr, nullptr));
        hipFunction_t function = nullptr;
        require(hipModuleGetFunction(&function, module, "vadd"));
        if (hipModuleGetFunction(&function, module, "vadd_u32") != hipErrorNotFound) std::_Exit(3);
        require(hipModuleUnload(module));
        // The same bundle with its gfx90a entry renamed to an architecture the device is not.
        bundle.replace(bundle.find("gfx90a"), 6, "gfx90c");
        std::_Exit(hipModuleLoadDataEx(&module, bundle.data(), 0, nullptr, nullptr) ==
                           hipErrorNoBinaryForGpu
                       ? 0
                       : 4);
    });
    INFO("child stderr: " << outcome.stderrText);
    CHECK(outcome.exitCode == 0);
}

// A kernel that faults ends the process, as clr's queue callback does: no failure comes back.
TEST_CASE("a kernel fault aborts the process", "[hip_double][module]") {
    const ChildOutcome outcome = runInChild([] {
        const std::string bundle = codeObjectBundle();
        hipModule_t module = nullptr;
        require(hipModuleLoadDataEx(&module, bundle.data(), 0, nullptr, nullptr));
        hipFunction_t failing = nullptr;
        require(hipModuleGetFunction(&failing, module, "fail_with_code"));
        hipStream_t stream = newStream();
        require(hipModuleLaunchKernel(failing, 1, 1, 1, 1, 1, 1, 0, stream, nullptr, nullptr));
        (void)hipStreamSynchronize(stream);
    });
    INFO("child stderr: " << outcome.stderrText);
    CHECK(outcome.signal == SIGABRT);
    CHECK_THAT(outcome.stderrText, Catch::Contains("Callback: Queue aborting with error"));
}
#endif
