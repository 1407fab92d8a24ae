// The hip plugin's dispatch table called directly, as the core calls it, against the
// libamdhip64.so double: a device's close, which the core does not reach on its own, destroys
// what the plugin kept past its destroy (gpu_common/engine/retired_streams.hpp and
// native_graph.hpp); frees queued for the device's free thread, and an allocation that needs
// their memory (gpu_common/engine/deferred_frees.hpp).
#include <dlfcn.h>
#include <polyhal/plugin.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <thread>

#include "gate.hpp"
#include "plugin_table.hpp"

using polyhal::doubles::Gate;

namespace {

const halPluginDispatchTable& plugin() {
    return polyhal::doubles::pluginTable(POLYHAL_HIP_PLUGIN);
}

// How many handles of `kind` the double holds alive.
size_t liveHandles(const char* kind) {
    static void* library = dlopen("libamdhip64.so.6", RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(library != nullptr);
    auto count =
        reinterpret_cast<size_t (*)(const char*)>(dlsym(library, "polyhalHipDoubleLiveHandles"));
    REQUIRE(count != nullptr);
    return count(kind);
}

// Polls the stream until its work is over; a query reaps nothing the plugin kept.
void waitUntilIdle(halPluginStream stream) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    halError status = HAL_ERROR_NOT_READY;
    while ((status = plugin().streamQuery(stream)) == HAL_ERROR_NOT_READY &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    REQUIRE(status == HAL_SUCCESS);
}

}  // namespace

TEST_CASE("a device's close destroys the streams kept past their destroy", "[hip][close]") {
    const halPluginDispatchTable& table = plugin();
    const size_t streamsBefore = liveHandles("hipStream_t");
    halPluginDevice device = nullptr;
    REQUIRE_PLUGIN_OK(table.deviceOpen(0, &device));
    halPluginStream streams[2] = {};
    halPluginEvent event = nullptr;
    REQUIRE_PLUGIN_OK(table.eventCreate(device, 0, &event));
    for (halPluginStream& stream : streams) {
        REQUIRE_PLUGIN_OK(table.streamCreate(device, 0, 0, &stream));
        REQUIRE_PLUGIN_OK(table.eventRecord(event, stream));
    }
    const size_t streamsInUse = liveHandles("hipStream_t");
    REQUIRE(streamsInUse >= streamsBefore + 2);
    for (halPluginStream stream : streams) REQUIRE_PLUGIN_OK(table.streamDestroy(stream));
    // The event was last recorded on a destroyed stream, which HIP's queries read: both kept.
    CHECK(liveHandles("hipStream_t") == streamsInUse);
    REQUIRE_PLUGIN_OK(table.eventSynchronize(event));
    REQUIRE_PLUGIN_OK(table.eventDestroy(event));
    table.deviceClose(device);
    CHECK(liveHandles("hipStream_t") == streamsBefore);
}

TEST_CASE("a device's close destroys a graph destroyed while its launch was pending",
          "[hip][close][graph]") {
    const halPluginDispatchTable& table = plugin();
    REQUIRE(table.graphCreate != nullptr);
    const size_t executablesBefore = liveHandles("hipGraphExec_t");
    const size_t streamsBefore = liveHandles("hipStream_t");
    halPluginDevice device = nullptr;
    REQUIRE_PLUGIN_OK(table.deviceOpen(0, &device));
    constexpr size_t kBytes = 4096;
    void* memory = nullptr;
    REQUIRE_PLUGIN_OK(table.memAllocDevice(device, kBytes, &memory));
    halPluginStream stream = nullptr;
    REQUIRE_PLUGIN_OK(table.streamCreate(device, 0, 0, &stream));

    halPluginGraphOp fill{};
    fill.kind = HAL_PLUGIN_GRAPH_OP_MEMSET;
    fill.params.memset.dst = memory;
    fill.params.memset.count = kBytes;
    fill.params.memset.value = 0x3C;
    // Static, as is the gate: a failed check ends the case while the plugin may still use them.
    static std::atomic<int> releases{0};
    halPluginGraphDesc desc{};
    desc.size = sizeof desc;
    desc.ops = &fill;
    desc.numOps = 1;
    desc.opSize = sizeof fill;
    desc.release = [](void* count) { ++*static_cast<std::atomic<int>*>(count); };
    desc.releaseContext = &releases;
    halPluginGraph graph = nullptr;
    REQUIRE_PLUGIN_OK(table.graphCreate(device, &desc, &graph));
    REQUIRE(liveHandles("hipGraphExec_t") == executablesBefore + 1);

    static Gate gate;
    REQUIRE_PLUGIN_OK(table.launchHostFunc(stream, Gate::hold, &gate));
    REQUIRE_PLUGIN_OK(table.graphLaunch(graph, stream));
    REQUIRE_PLUGIN_OK(table.graphDestroy(graph));
    // The launch is behind the gate: the executable is kept, its release not yet called.
    CHECK(liveHandles("hipGraphExec_t") == executablesBefore + 1);
    CHECK(releases == 0);
    gate.open = true;
    waitUntilIdle(stream);
    REQUIRE_PLUGIN_OK(table.streamDestroy(stream));
    REQUIRE_PLUGIN_OK(table.memFreeDevice(device, memory));
    table.deviceClose(device);
    CHECK(liveHandles("hipGraphExec_t") == executablesBefore);
    // The release comes from the user object's destructor, which HIP may run on a thread of its
    // own after the destroy.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (releases == 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(releases == 1);
    CHECK(liveHandles("hipStream_t") == streamsBefore);
}

// hipFree waits for every stream of the device, here for one a host function holds: the free
// returns at once all the same, and an allocation that finds the device exhausted waits for the
// queued free and gets its memory. The gate is opened once the allocation has been called.
TEST_CASE("a free waits for no stream; an exhausted allocation waits for the queued frees",
          "[hip][memory]") {
    const halPluginDispatchTable& table = plugin();
    halPluginDevice device = nullptr;
    REQUIRE_PLUGIN_OK(table.deviceOpen(0, &device));
    halPluginStream held = nullptr;
    REQUIRE_PLUGIN_OK(table.streamCreate(device, 0, 0, &held));
    static Gate gate;
    REQUIRE_PLUGIN_OK(table.launchHostFunc(held, Gate::hold, &gate));
    // More than half of the double's 1 GiB device: two cannot be had at once.
    constexpr size_t kMostOfTheDevice = size_t{768} << 20;
    void* first = nullptr;
    REQUIRE_PLUGIN_OK(table.memAllocDevice(device, kMostOfTheDevice, &first));
    REQUIRE_PLUGIN_OK(table.memFreeDevice(device, first));
    CHECK(table.streamQuery(held) == HAL_ERROR_NOT_READY);  // the free did not wait for it

    std::atomic<bool> calling{false};
    auto opener = std::async(std::launch::async, [&] {
        while (!calling) std::this_thread::yield();
        gate.open = true;
    });
    void* second = nullptr;
    calling = true;
    const halError allocated = table.memAllocDevice(device, kMostOfTheDevice, &second);
    opener.get();
    CHECK(allocated == HAL_SUCCESS);
    waitUntilIdle(held);
    if (allocated == HAL_SUCCESS) REQUIRE_PLUGIN_OK(table.memFreeDevice(device, second));
    REQUIRE_PLUGIN_OK(table.streamDestroy(held));
    table.deviceClose(device);
}
