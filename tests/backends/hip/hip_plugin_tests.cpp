// The hip plugin through polyhal's public API against the libamdhip64.so double with two devices:
// an application that uses HIP itself keeps its current device whatever polyhal does.
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <polyhal/hal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "every_entry.hpp"
#include "gate.hpp"
#include "graph_scenario.hpp"
#include "kernel_arguments.hpp"
#include "wide_pitch_box.hpp"

using polyhal::doubles::Gate;
using polyhal::doubles::GraphScenario;

namespace {

template <class Fn>
Fn runtimeFunction(const char* name) {
    // The library the plugin opened (the double, first on the library path).
    static void* library = dlopen("libamdhip64.so.6", RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(library != nullptr);
    void* symbol = dlsym(library, name);
    REQUIRE(symbol != nullptr);
    return reinterpret_cast<Fn>(symbol);
}

int currentDevice() {
    int device = -1;
    REQUIRE(runtimeFunction<hipError_t (*)(int*)>("hipGetDevice")(&device) == hipSuccess);
    return device;
}

}  // namespace

TEST_CASE("every polyhal call leaves the calling thread's current HIP device as it found it",
          "[hip][context]") {
    REQUIRE(halInit() == HAL_SUCCESS);
    // The application works on device 1 while it uses polyhal on device 0.
    REQUIRE(runtimeFunction<hipError_t (*)(int)>("hipSetDevice")(1) == hipSuccess);
    polyhal::doubles::callEveryEntry(
        [](const char* call) {
            INFO(call);
            CHECK(currentDevice() == 1);
        },
        "");
}

namespace {

uint64_t graphLaunches() {
    return runtimeFunction<uint64_t (*)()>("polyhalHipDoubleGraphLaunches")();
}

size_t liveHandles(const char* kind) {
    return runtimeFunction<size_t (*)(const char*)>("polyhalHipDoubleLiveHandles")(kind);
}

}  // namespace

TEST_CASE(
    "a graph of device and page-locked memory and host functions is one hipGraphLaunch "
    "per launch; one that copies pageable memory is replayed",
    "[hip][graph]") {
    REQUIRE(halInit() == HAL_SUCCESS);
    REQUIRE(halSetDevice(0) == HAL_SUCCESS);
    GraphScenario scenario;
    unsigned char* pinned = scenario.pinned();
    const std::vector<unsigned char> filled(GraphScenario::kBytes, 0x6B);

    halGraph native = scenario.capture(pinned, pinned + GraphScenario::kBytes);
    uint64_t before = graphLaunches();
    REQUIRE(halGraphLaunch(native, scenario.stream()) == HAL_SUCCESS);
    REQUIRE(halGraphLaunch(native, scenario.stream()) == HAL_SUCCESS);
    REQUIRE(halSynchronizeStream(scenario.stream()) == HAL_SUCCESS);
    CHECK(graphLaunches() - before == 2);
    CHECK(scenario.calls() == 2);
    CHECK(std::vector<unsigned char>(pinned, pinned + GraphScenario::kBytes) == filled);
    GraphScenario::checkBox(pinned + GraphScenario::kBytes, pinned);
    REQUIRE(halGraphDestroy(native) == HAL_SUCCESS);

    std::vector<unsigned char> pageable(GraphScenario::kBytes, 0);
    halGraph replayed = scenario.capture(pageable.data(), pinned + GraphScenario::kBytes);
    before = graphLaunches();
    REQUIRE(halGraphLaunch(replayed, scenario.stream()) == HAL_SUCCESS);
    REQUIRE(halSynchronizeStream(scenario.stream()) == HAL_SUCCESS);
    CHECK(graphLaunches() == before);
    CHECK(scenario.calls() == 3);
    CHECK(pageable == filled);
    REQUIRE(halGraphDestroy(replayed) == HAL_SUCCESS);
}

// The double frees an executable as the oldest runtime with user objects does: at once, running
// its user objects' destructors, so a destroy with a launch pending is a breach there.
TEST_CASE(
    "a graph destroyed while its launch is pending is freed, and released, once the launch "
    "completes, without holding the caller",
    "[hip][graph]") {
    REQUIRE(halInit() == HAL_SUCCESS);
    REQUIRE(halSetDevice(0) == HAL_SUCCESS);
    GraphScenario scenario;
    unsigned char* pinned = scenario.pinned();
    halGraph graph = scenario.capture(pinned, pinned + GraphScenario::kBytes);
    const size_t executables = liveHandles("hipGraphExec_t");
    const size_t userObjects = liveHandles("hipUserObject_t");

    Gate gate;
    REQUIRE(halLaunchHostFunc(scenario.stream(), Gate::hold, &gate) == HAL_SUCCESS);
    const uint64_t before = graphLaunches();
    REQUIRE(halGraphLaunch(graph, scenario.stream()) == HAL_SUCCESS);
    REQUIRE(halGraphDestroy(graph) == HAL_SUCCESS);
    CHECK(graphLaunches() - before == 1);  // native, not replayed
    CHECK(halQueryStream(scenario.stream()) == HAL_ERROR_NOT_READY);
    CHECK(liveHandles("hipGraphExec_t") == executables);
    CHECK(liveHandles("hipUserObject_t") == userObjects);

    gate.open = true;
    REQUIRE(halSynchronizeStream(scenario.stream()) == HAL_SUCCESS);
    CHECK(scenario.calls() == 1);  // its host function ran, with the core's data still there
    CHECK(std::vector<unsigned char>(pinned, pinned + GraphScenario::kBytes) ==
          std::vector<unsigned char>(GraphScenario::kBytes, 0x6B));
    // The synchronisation found the launch complete and destroyed the executable, and with it
    // the user object (ROCm runs its destructor then; the double, on a thread of its own).
    CHECK(liveHandles("hipGraphExec_t") == executables - 1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (liveHandles("hipUserObject_t") == userObjects &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(liveHandles("hipUserObject_t") == userObjects - 1);
}

TEST_CASE("a graph with a host-to-host copy is replayed, with the eager results", "[hip][graph]") {
    REQUIRE(halInit() == HAL_SUCCESS);
    REQUIRE(halSetDevice(0) == HAL_SUCCESS);
    halStream stream = nullptr;
    REQUIRE(halCreateStream(&stream) == HAL_SUCCESS);
    void* device = nullptr;
    void* from = nullptr;
    void* to = nullptr;
    constexpr size_t kBytes = 64;
    REQUIRE(halMalloc(&device, kBytes) == HAL_SUCCESS);
    REQUIRE(halMallocHost(&from, kBytes) == HAL_SUCCESS);
    REQUIRE(halMallocHost(&to, kBytes) == HAL_SUCCESS);
    std::memset(to, 0, kBytes);

    REQUIRE(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL) == HAL_SUCCESS);
    REQUIRE(halMemsetAsync(device, kBytes, 0x5A, kBytes, stream) == HAL_SUCCESS);
    REQUIRE(halMemcpyAsync(from, kBytes, device, kBytes, HAL_MEMCPY_DEVICE_TO_HOST, stream) ==
            HAL_SUCCESS);
    REQUIRE(halMemcpyAsync(to, kBytes, from, kBytes, HAL_MEMCPY_HOST_TO_HOST, stream) ==
            HAL_SUCCESS);
    halGraph graph = nullptr;
    REQUIRE(halStreamEndCapture(stream, &graph) == HAL_SUCCESS);

    const uint64_t before = graphLaunches();
    REQUIRE(halGraphLaunch(graph, stream) == HAL_SUCCESS);
    REQUIRE(halSynchronizeStream(stream) == HAL_SUCCESS);
    CHECK(graphLaunches() == before);
    CHECK(std::vector<unsigned char>(static_cast<unsigned char*>(to),
                                     static_cast<unsigned char*>(to) + kBytes) ==
          std::vector<unsigned char>(kBytes, 0x5A));
    REQUIRE(halGraphDestroy(graph) == HAL_SUCCESS);
    REQUIRE(halFreeHost(to) == HAL_SUCCESS);
    REQUIRE(halFreeHost(from) == HAL_SUCCESS);
    REQUIRE(halFree(device) == HAL_SUCCESS);
    REQUIRE(halDestroyStream(stream) == HAL_SUCCESS);
}

namespace {

#ifndef POLYHAL_HIP_TEST_KERNELS
#define POLYHAL_HIP_TEST_KERNELS nullptr
#endif

// The CTS kernels as code objects for AMD GPUs (an offload bundle hipcc built), or "" (the cases
// that need them then skip) when hipcc was not found.
std::string testKernels() {
    if (POLYHAL_HIP_TEST_KERNELS == nullptr) {
        WARN("skipped: no HIP test kernels (hipcc was not found)");
        return {};
    }
    std::ifstream file(POLYHAL_HIP_TEST_KERNELS, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(file), {});
}

}  // namespace

TEST_CASE("launch arguments must match the kernel's parameters in number and size",
          "[hip][kernel]") {
    const std::string image = testKernels();
    if (!image.empty()) polyhal::doubles::launchArgumentsMustMatchTheKernel(image);
}

TEST_CASE("a graph with a kernel that takes no arguments is built natively", "[hip][graph]") {
    REQUIRE(halInit() == HAL_SUCCESS);
    REQUIRE(halSetDevice(0) == HAL_SUCCESS);
    const std::string image = testKernels();
    if (image.empty()) return;
    halModule module = nullptr;
    halFunction kernel = nullptr;
    REQUIRE(halModuleLoadData(&module, image.data(), image.size()) == HAL_SUCCESS);
    REQUIRE(halModuleGetFunction(&kernel, module, "fail_with_code") == HAL_SUCCESS);
    halStream stream = nullptr;
    REQUIRE(halCreateStream(&stream) == HAL_SUCCESS);

    const size_t executables = liveHandles("hipGraphExec_t");
    REQUIRE(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL) == HAL_SUCCESS);
    REQUIRE(halLaunchKernel(kernel, {1, 1, 1}, {1, 1, 1}, 0, nullptr, 0, stream) == HAL_SUCCESS);
    halGraph graph = nullptr;
    REQUIRE(halStreamEndCapture(stream, &graph) == HAL_SUCCESS);
    // The runtime refuses a kernel node without an argument list: the core would replay.
    CHECK(liveHandles("hipGraphExec_t") == executables + 1);
    // Never launched: the kernel faults by design.
    REQUIRE(halGraphDestroy(graph) == HAL_SUCCESS);
    CHECK(liveHandles("hipGraphExec_t") == executables);
    REQUIRE(halDestroyStream(stream) == HAL_SUCCESS);
    REQUIRE(halModuleUnload(module) == HAL_SUCCESS);
}

// The runtime's event queries read the stream of the event's last record: the plugin keeps a
// destroyed stream, which the double checks at every query, and hands it out again.
TEST_CASE("an event is queried after the stream it was recorded on is destroyed", "[hip][stream]") {
    REQUIRE(halInit() == HAL_SUCCESS);
    REQUIRE(halSetDevice(0) == HAL_SUCCESS);
    halStream stream = nullptr;
    halEvent event = nullptr;
    REQUIRE(halCreateStream(&stream) == HAL_SUCCESS);
    REQUIRE(halCreateEvent(&event) == HAL_SUCCESS);
    REQUIRE(halRecordEvent(event, stream) == HAL_SUCCESS);
    void* native = nullptr;
    REQUIRE(halStreamGetNativeHandle(stream, &native) == HAL_SUCCESS);
    const size_t streams = liveHandles("hipStream_t");
    REQUIRE(halDestroyStream(stream) == HAL_SUCCESS);
    CHECK(liveHandles("hipStream_t") == streams);
    CHECK(halSynchronizeEvent(event) == HAL_SUCCESS);
    CHECK(halQueryEvent(event) == HAL_SUCCESS);

    // Once idle (the core may have enqueued its own work at the destroy), the kept stream is the
    // next stream of that device and priority: the last one kept is taken first.
    REQUIRE(halSynchronizeDevice() == HAL_SUCCESS);
    halStream next = nullptr;
    REQUIRE(halCreateStream(&next) == HAL_SUCCESS);
    void* reused = nullptr;
    REQUIRE(halStreamGetNativeHandle(next, &reused) == HAL_SUCCESS);
    CHECK(reused == native);
    CHECK(liveHandles("hipStream_t") == streams);
    CHECK(halQueryStream(next) == HAL_SUCCESS);
    REQUIRE(halDestroyEvent(event) == HAL_SUCCESS);
    REQUIRE(halDestroyStream(next) == HAL_SUCCESS);
}

TEST_CASE("a graph destroyed after the stream of its last launch is destroyed", "[hip][graph]") {
    REQUIRE(halInit() == HAL_SUCCESS);
    REQUIRE(halSetDevice(0) == HAL_SUCCESS);
    GraphScenario scenario;
    unsigned char* pinned = scenario.pinned();
    halGraph graph = scenario.capture(pinned, pinned + GraphScenario::kBytes);
    halStream other = nullptr;
    REQUIRE(halCreateStream(&other) == HAL_SUCCESS);
    const size_t executables = liveHandles("hipGraphExec_t");
    Gate gate;
    REQUIRE(halLaunchHostFunc(other, Gate::hold, &gate) == HAL_SUCCESS);
    REQUIRE(halGraphLaunch(graph, other) == HAL_SUCCESS);
    REQUIRE(halDestroyStream(other) == HAL_SUCCESS);
    REQUIRE(halGraphDestroy(graph) == HAL_SUCCESS);  // retired: its launch is held
    gate.open = true;
    CHECK(liveHandles("hipGraphExec_t") == executables);
    REQUIRE(halSynchronizeDevice() == HAL_SUCCESS);  // reaps it
    CHECK(liveHandles("hipGraphExec_t") == executables - 1);
    CHECK(scenario.calls() == 1);
}

// The runtime's loader takes no size and trusts the image's headers: the plugin checks them.
TEST_CASE("a code object whose headers point past its end is refused before the runtime reads it",
          "[hip][module]") {
    REQUIRE(halInit() == HAL_SUCCESS);
    REQUIRE(halSetDevice(0) == HAL_SUCCESS);
    halModule module = nullptr;

    // A 64-bit ELF header whose section header table lies 1 MiB into the 64-byte image.
    std::vector<unsigned char> truncated(64, 0);
    const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2 /* 64-bit */, 1 /* little-endian */, 1};
    std::memcpy(truncated.data(), ident, sizeof ident);
    const uint64_t farAway = 1 << 20;
    const uint16_t sectionHeaderSize = 64;
    const uint16_t sections = 1;
    std::memcpy(truncated.data() + 0x28, &farAway, sizeof farAway);
    std::memcpy(truncated.data() + 0x3a, &sectionHeaderSize, sizeof sectionHeaderSize);
    std::memcpy(truncated.data() + 0x3c, &sections, sizeof sections);
    CHECK(halModuleLoadData(&module, truncated.data(), truncated.size()) ==
          HAL_ERROR_INVALID_IMAGE);
    CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("section header table runs past"));

    // An offload bundle of one entry that lies past the end.
    std::vector<unsigned char> bundle(24, 0);
    std::memcpy(bundle.data(), "__CLANG_OFFLOAD_BUNDLE__", 24);
    const uint64_t fields[] = {1, 4096, 4096, 0};  // entries; offset, size, triple length
    bundle.insert(bundle.end(), reinterpret_cast<const unsigned char*>(fields),
                  reinterpret_cast<const unsigned char*>(fields) + sizeof fields);
    CHECK(halModuleLoadData(&module, bundle.data(), bundle.size()) == HAL_ERROR_INVALID_IMAGE);
    CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("an entry runs past the end"));

    const char text[] = "not a code object";
    CHECK(halModuleLoadData(&module, text, sizeof text) == HAL_ERROR_INVALID_IMAGE);
    CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("not a HIP code object"));
}

TEST_CASE("a box whose pitches pass the device's maximum is copied, eagerly and natively",
          "[hip][graph]") {
    int maxPitch = 0;
    REQUIRE(runtimeFunction<hipError_t (*)(int*, hipDeviceAttribute_t, int)>(
                "hipDeviceGetAttribute")(&maxPitch, hipDeviceAttributeMaxPitch, 0) == hipSuccess);
    polyhal::doubles::copyWidePitchBox(static_cast<size_t>(maxPitch), graphLaunches);
}
