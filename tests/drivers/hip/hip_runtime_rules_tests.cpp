// Each rule of the libamdhip64.so double fires: a deliberately wrong call sequence, run in a
// child process, ends it with the rule named (or gets the result the runtime returns).
#define CATCH_CONFIG_MAIN
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#ifndef __HIP_DISABLE_CPP_FUNCTIONS__
#define __HIP_DISABLE_CPP_FUNCTIONS__
#endif
#include <hip/hip_runtime_api.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <functional>
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
