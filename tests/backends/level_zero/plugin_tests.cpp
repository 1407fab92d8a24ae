// The level_zero plugin, loaded as the core loads it, against the driver double behind Debian's
// loader (two devices, POLYHAL_ZE_DOUBLE_DEVICES=2): entries the conformance suite cannot reach
// through the core. The cases tagged [debian_loader] run with Debian's loader 1.8 alone, the
// others with the newer-loader stand-in in front of it (newer_loader/).
#include <dlfcn.h>

#include <polyhal/plugin.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gate.hpp"
#include "graph_scenario.hpp"
#include "plugin_table.hpp"

namespace {

using polyhal::doubles::Gate;

// The plugin, initialised once for the process (a plugin is initialised once).
const halPluginDispatchTable& plugin() {
    return polyhal::doubles::pluginTable(POLYHAL_LEVEL_ZERO_PLUGIN);
}

// The conformance kernels' SPIR-V, loaded on `device`.
halPluginModule loadCtsKernels(halPluginDevice device) {
    std::ifstream file(POLYHAL_CTS_SPIRV, std::ios::binary);
    const std::vector<char> image((std::istreambuf_iterator<char>(file)),
                                  std::istreambuf_iterator<char>());
    REQUIRE(!image.empty());
    halPluginModule module = nullptr;
    REQUIRE(plugin().moduleLoadData(device, image.data(), image.size(), &module) == HAL_SUCCESS);
    return module;
}

}  // namespace

TEST_CASE("peer copies between devices of one context go in stream order, without blocking",
          "[peer]") {
    const halPluginDispatchTable& ze = plugin();
    int count = 0;
    REQUIRE(ze.deviceGetCount(&count) == HAL_SUCCESS);
    REQUIRE(count == 2);
    halPluginDevice devices[2] = {};
    for (int i = 0; i < 2; ++i) {
        REQUIRE(ze.deviceOpen(i, &devices[i]) == HAL_SUCCESS);
        halPluginDeviceInfo info{};
        info.size = sizeof info;
        REQUIRE(ze.deviceGetInfo(devices[i], &info) == HAL_SUCCESS);
        CHECK((info.capabilities & HAL_DEVICE_CAP_PEER_COPY) != 0);
    }
    REQUIRE(ze.memcpyPeerAsync != nullptr);

    constexpr size_t kSize = 64 * 1024;
    void* source = nullptr;
    void* target = nullptr;
    REQUIRE(ze.memAllocDevice(devices[0], kSize, &source) == HAL_SUCCESS);
    REQUIRE(ze.memAllocDevice(devices[1], kSize, &target) == HAL_SUCCESS);
    halPluginStream stream = nullptr;
    REQUIRE(ze.streamCreate(devices[0], 0, 0, &stream) == HAL_SUCCESS);

    Gate gate;
    REQUIRE(ze.launchHostFunc(stream, Gate::hold, &gate) == HAL_SUCCESS);
    REQUIRE(ze.memsetAsync(stream, source, 0x5A, kSize) == HAL_SUCCESS);
    // Returns while the stream is held: the copy is queued behind the fill, not made now.
    REQUIRE(ze.memcpyPeerAsync(stream, target, devices[1], source, devices[0], kSize) ==
            HAL_SUCCESS);
    CHECK(ze.streamQuery(stream) == HAL_ERROR_NOT_READY);
    gate.open = true;
    REQUIRE(ze.streamSynchronize(stream) == HAL_SUCCESS);

    std::vector<unsigned char> seen(kSize, 0);
    REQUIRE(ze.memcpyAsync(stream, seen.data(), target, kSize, HAL_MEMCPY_DEVICE_TO_HOST) ==
            HAL_SUCCESS);
    REQUIRE(ze.streamSynchronize(stream) == HAL_SUCCESS);
    CHECK(seen == std::vector<unsigned char>(kSize, 0x5A));

    REQUIRE(ze.streamDestroy(stream) == HAL_SUCCESS);
    REQUIRE(ze.memFreeDevice(devices[0], source) == HAL_SUCCESS);
    REQUIRE(ze.memFreeDevice(devices[1], target) == HAL_SUCCESS);
    for (halPluginDevice device : devices) ze.deviceClose(device);
}

TEST_CASE("streams of a device are spread over its compute engines", "[engines]") {
    const halPluginDispatchTable& ze = plugin();
    void* driver = dlopen(std::getenv("ZE_ENABLE_ALT_DRIVERS"), RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(driver != nullptr);
    using EngineOf = int (*)(void* list, uint32_t* ordinal, uint32_t* index);
    const auto engineOf = reinterpret_cast<EngineOf>(dlsym(driver, "zedoubleCommandListEngine"));
    REQUIRE(engineOf != nullptr);

    halPluginDevice device = nullptr;
    REQUIRE(ze.deviceOpen(0, &device) == HAL_SUCCESS);
    // The double's device has four compute engines (command queue group 0).
    constexpr int kEngines = 4;
    std::vector<halPluginStream> streams(kEngines);
    std::set<uint32_t> indices;
    for (halPluginStream& stream : streams) {
        REQUIRE(ze.streamCreate(device, 0, 0, &stream) == HAL_SUCCESS);
        void* list = nullptr;
        REQUIRE(ze.streamGetNativeHandle(stream, &list) == HAL_SUCCESS);
        uint32_t ordinal = 99, index = 99;
        REQUIRE(engineOf(list, &ordinal, &index) == 0);
        CHECK(ordinal == 0);
        indices.insert(index);
    }
    CHECK(indices == std::set<uint32_t>{0, 1, 2, 3});
    for (halPluginStream stream : streams) REQUIRE(ze.streamDestroy(stream) == HAL_SUCCESS);
    ze.deviceClose(device);
}

namespace {

double threadCpuSeconds() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

void sleep300ms(void*) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

}  // namespace

TEST_CASE("synchronising a HAL_EVENT_BLOCKING_SYNC event sleeps instead of spinning", "[events]") {
    const halPluginDispatchTable& ze = plugin();
    halPluginDevice device = nullptr;
    REQUIRE(ze.deviceOpen(0, &device) == HAL_SUCCESS);
    halPluginStream stream = nullptr;
    REQUIRE(ze.streamCreate(device, 0, 0, &stream) == HAL_SUCCESS);
    halPluginEvent event = nullptr;
    REQUIRE(ze.eventCreate(device, HAL_EVENT_BLOCKING_SYNC, &event) == HAL_SUCCESS);

    void* driver = dlopen(std::getenv("ZE_ENABLE_ALT_DRIVERS"), RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(driver != nullptr);
    using SpinningWaits = uint64_t (*)();
    const auto spinningWaits =
        reinterpret_cast<SpinningWaits>(dlsym(driver, "zedoubleSpinningWaits"));
    REQUIRE(spinningWaits != nullptr);

    REQUIRE(ze.launchHostFunc(stream, sleep300ms, nullptr) == HAL_SUCCESS);
    REQUIRE(ze.eventRecord(event, stream) == HAL_SUCCESS);
    const uint64_t spunBefore = spinningWaits();
    const auto wallStart = std::chrono::steady_clock::now();
    const double cpuStart = threadCpuSeconds();
    REQUIRE(ze.eventSynchronize(event) == HAL_SUCCESS);
    const double cpu = threadCpuSeconds() - cpuStart;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    INFO("waited " << wall << " s, using " << cpu << " s of CPU");
    CHECK(wall >= 0.2);
    // The double's zeEventHostSynchronize spins as Intel's driver does: the wait must not use
    // it, and must not use the core it would occupy.
    CHECK(spinningWaits() == spunBefore);
    CHECK(cpu < 0.1 * wall);

    REQUIRE(ze.eventDestroy(event) == HAL_SUCCESS);
    REQUIRE(ze.streamDestroy(stream) == HAL_SUCCESS);
    ze.deviceClose(device);
}

TEST_CASE("kernels reach allocations above 4 GB", "[kernels]") {
    const halPluginDispatchTable& ze = plugin();
    halPluginDevice device = nullptr;
    REQUIRE(ze.deviceOpen(0, &device) == HAL_SUCCESS);
    halPluginDeviceInfo info{};
    info.size = sizeof info;
    REQUIRE(ze.deviceGetInfo(device, &info) == HAL_SUCCESS);
    // The double's device memory is a sparse memory file: POLYHAL_ZE_DOUBLE_MEMORY sets 8 GiB.
    REQUIRE(info.totalMemory > (uint64_t{5} << 30));

    halPluginModule module = loadCtsKernels(device);
    halPluginFunction fill = nullptr;
    REQUIRE(ze.moduleGetFunction(module, "fill_u32", &fill) == HAL_SUCCESS);

    constexpr size_t kLarge = (size_t{4} << 30) + 4096;
    void* large = nullptr;
    REQUIRE(ze.memAllocDevice(device, kLarge, &large) == HAL_SUCCESS);
    halPluginStream stream = nullptr;
    REQUIRE(ze.streamCreate(device, 0, 0, &stream) == HAL_SUCCESS);
    const uint32_t value = 0xC0FFEE, n = 64;
    const halKernelArg args[] = {{&large, sizeof large}, {&value, sizeof value}, {&n, sizeof n}};
    REQUIRE(ze.launchKernel(stream, fill, {1, 1, 1}, {64, 1, 1}, 0, args, 3) == HAL_SUCCESS);
    std::vector<uint32_t> seen(n, 0);
    REQUIRE(ze.memcpyAsync(stream, seen.data(), large, n * sizeof(uint32_t),
                           HAL_MEMCPY_DEVICE_TO_HOST) == HAL_SUCCESS);
    REQUIRE(ze.streamSynchronize(stream) == HAL_SUCCESS);
    CHECK(seen == std::vector<uint32_t>(n, value));

    REQUIRE(ze.streamDestroy(stream) == HAL_SUCCESS);
    REQUIRE(ze.memFreeDevice(device, large) == HAL_SUCCESS);
    REQUIRE(ze.moduleUnload(module) == HAL_SUCCESS);
    ze.deviceClose(device);
}

TEST_CASE("a group larger than the kernel's own limit is refused, naming the limit", "[kernels]") {
    const halPluginDispatchTable& ze = plugin();
    halPluginDevice device = nullptr;
    REQUIRE(ze.deviceOpen(0, &device) == HAL_SUCCESS);
    halPluginDeviceInfo info{};
    info.size = sizeof info;
    REQUIRE(ze.deviceGetInfo(device, &info) == HAL_SUCCESS);
    halPluginModule module = loadCtsKernels(device);
    halPluginFunction blockSum = nullptr;
    REQUIRE(ze.moduleGetFunction(module, "block_sum", &blockSum) == HAL_SUCCESS);
    halPluginStream stream = nullptr;
    REQUIRE(ze.streamCreate(device, 0, 0, &stream) == HAL_SUCCESS);

    // Within the device's limit, above the kernel's (the double gives block_sum 256).
    REQUIRE(info.maxThreadsPerBlock >= 512);
    void* memory = nullptr;
    REQUIRE(ze.memAllocDevice(device, 4096, &memory) == HAL_SUCCESS);
    const uint32_t n = 512;
    const halKernelArg args[] = {
        {&memory, sizeof memory}, {&memory, sizeof memory}, {&n, sizeof n}};
    CHECK(ze.launchKernel(stream, blockSum, {1, 1, 1}, {512, 1, 1}, 512 * sizeof(uint32_t), args,
                          3) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(polyhal::doubles::lastPluginError(),
               Catch::Contains("at most 256 work-items per group"));

    REQUIRE(ze.streamDestroy(stream) == HAL_SUCCESS);
    REQUIRE(ze.memFreeDevice(device, memory) == HAL_SUCCESS);
    REQUIRE(ze.moduleUnload(module) == HAL_SUCCESS);
    ze.deviceClose(device);
}

TEST_CASE("copies run on a copy engine, in stream order with the rest", "[engines]") {
    const halPluginDispatchTable& ze = plugin();
    void* driver = dlopen(std::getenv("ZE_ENABLE_ALT_DRIVERS"), RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(driver != nullptr);
    using CommandsRunOn = uint64_t (*)(uint32_t ordinal);
    const auto commandsRunOn =
        reinterpret_cast<CommandsRunOn>(dlsym(driver, "zedoubleCommandsRunOn"));
    REQUIRE(commandsRunOn != nullptr);
    // The double's command queue groups: 0 computes and copies, 1 only copies.
    constexpr uint32_t kCopyOnly = 1;

    halPluginDevice device = nullptr;
    REQUIRE(ze.deviceOpen(0, &device) == HAL_SUCCESS);
    halPluginStream stream = nullptr;
    REQUIRE(ze.streamCreate(device, 0, 0, &stream) == HAL_SUCCESS);
    constexpr size_t kCount = 4096;
    void* memory = nullptr;
    REQUIRE(ze.memAllocDevice(device, kCount, &memory) == HAL_SUCCESS);
    const uint64_t copiesBefore = commandsRunOn(kCopyOnly);

    // Fill (compute engine), copy back and forth (copy engine), fill again, copy: each step must
    // see the one before it.
    std::vector<unsigned char> first(kCount, 0), second(kCount, 0);
    std::vector<unsigned char> source(kCount, 0x11);
    REQUIRE(ze.memsetAsync(stream, memory, 0x22, kCount) == HAL_SUCCESS);
    REQUIRE(ze.memcpyAsync(stream, first.data(), memory, kCount, HAL_MEMCPY_DEVICE_TO_HOST) ==
            HAL_SUCCESS);
    REQUIRE(ze.memcpyAsync(stream, memory, source.data(), kCount, HAL_MEMCPY_HOST_TO_DEVICE) ==
            HAL_SUCCESS);
    REQUIRE(ze.memsetAsync(stream, memory, 0x33, kCount / 2) == HAL_SUCCESS);
    REQUIRE(ze.memcpyAsync(stream, second.data(), memory, kCount, HAL_MEMCPY_DEVICE_TO_HOST) ==
            HAL_SUCCESS);
    REQUIRE(ze.streamSynchronize(stream) == HAL_SUCCESS);

    CHECK(first == std::vector<unsigned char>(kCount, 0x22));
    std::vector<unsigned char> expected(kCount, 0x11);
    std::fill(expected.begin(), expected.begin() + kCount / 2, 0x33);
    CHECK(second == expected);
    CHECK(commandsRunOn(kCopyOnly) == copiesBefore + 3);

    REQUIRE(ze.streamDestroy(stream) == HAL_SUCCESS);
    REQUIRE(ze.memFreeDevice(device, memory) == HAL_SUCCESS);
    ze.deviceClose(device);
}

namespace {

// One of the double's counters, by the name of its function.
uint64_t doubleCounter(const char* name) {
    plugin();  // the loader loads the double when the plugin initialises
    void* driver = dlopen(std::getenv("ZE_ENABLE_ALT_DRIVERS"), RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(driver != nullptr);
    using Counter = uint64_t (*)();
    const auto counter = reinterpret_cast<Counter>(dlsym(driver, name));
    REQUIRE(counter != nullptr);
    return counter();
}

// The double's count of regular command lists submitted to immediate ones.
uint64_t commandListSubmissions() {
    return doubleCounter("zedoubleCommandListSubmissions");
}

void countRelease(void* releases) {
    ++*static_cast<std::atomic<int>*>(releases);
}

// A graph of device 0, opened for it: a fill of device memory, a kernel writing `value` over its
// first `kWords` words, a copy of the whole to `copy` (host memory of the driver), and a box copy
// of two rows of two slices to `box`.
struct GraphOfEveryKind {
    static constexpr size_t kBytes = 1024;
    static constexpr uint32_t kWords = 64;
    static constexpr uint32_t kValue = 0xC0DE;

    GraphOfEveryKind() : ze(plugin()) {
        REQUIRE(ze.deviceOpen(0, &device) == HAL_SUCCESS);
        module = loadCtsKernels(device);
        halPluginFunction fill = nullptr;
        REQUIRE(ze.moduleGetFunction(module, "fill_u32", &fill) == HAL_SUCCESS);
        REQUIRE(ze.memAllocDevice(device, kBytes, &memory) == HAL_SUCCESS);
        REQUIRE(ze.memAllocHost(device, kBytes, &copy) == HAL_SUCCESS);
        REQUIRE(ze.memAllocHost(device, kBytes, &box) == HAL_SUCCESS);
        args[0] = {&memory, sizeof memory};
        args[1] = {&value, sizeof value};
        args[2] = {&words, sizeof words};
        ops[0].kind = HAL_PLUGIN_GRAPH_OP_MEMSET;
        ops[0].params.memset = {memory, kBytes, 0x6B};
        ops[1].kind = HAL_PLUGIN_GRAPH_OP_KERNEL;
        ops[1].params.kernel = {fill, {1, 1, 1}, {kWords, 1, 1}, 0, args, 3};
        ops[2].kind = HAL_PLUGIN_GRAPH_OP_COPY;
        ops[2].params.copy = {copy, memory, kBytes, HAL_MEMCPY_DEVICE_TO_HOST};
        ops[3].kind = HAL_PLUGIN_GRAPH_OP_COPY_3D;
        ops[3].params.copy3D =
            polyhal::doubles::GraphScenario::boxCopy(static_cast<unsigned char*>(box), memory);
        desc.size = sizeof desc;
        desc.ops = ops;
        desc.numOps = 4;
        desc.opSize = sizeof(halPluginGraphOp);
        desc.release = countRelease;
        desc.releaseContext = &releases;
    }
    ~GraphOfEveryKind() {
        CHECK(ze.memFreeDevice(device, memory) == HAL_SUCCESS);
        CHECK(ze.memFreeHost(device, copy) == HAL_SUCCESS);
        CHECK(ze.memFreeHost(device, box) == HAL_SUCCESS);
        CHECK(ze.moduleUnload(module) == HAL_SUCCESS);
        ze.deviceClose(device);
    }

    void clearResults() {
        std::memset(copy, 0, kBytes);
        std::memset(box, 0, kBytes);
    }
    // What one run leaves: the kernel's words, then the fill's bytes; each box row the bytes it
    // was copied from.
    void checkResults() const {
        const auto* bytes = static_cast<const unsigned char*>(copy);
        std::vector<uint32_t> head(kWords);
        std::memcpy(head.data(), bytes, sizeof(uint32_t) * kWords);
        CHECK(head == std::vector<uint32_t>(kWords, kValue));
        CHECK(std::all_of(bytes + sizeof(uint32_t) * kWords, bytes + kBytes,
                          [](unsigned char byte) { return byte == 0x6B; }));
        polyhal::doubles::GraphScenario::checkBox(static_cast<const unsigned char*>(box), bytes);
    }

    const halPluginDispatchTable& ze;
    halPluginDevice device = nullptr;
    halPluginModule module = nullptr;
    void* memory = nullptr;
    void* copy = nullptr;
    void* box = nullptr;
    uint32_t value = kValue;
    uint32_t words = kWords;
    halKernelArg args[3] = {};
    halPluginGraphOp ops[4] = {};
    halPluginGraphDesc desc{};
    std::atomic<int> releases{0};
};

}  // namespace

TEST_CASE("a graph launches as one submission of a regular command list, its operations in order",
          "[graph]") {
    const halPluginDispatchTable& ze = plugin();
    REQUIRE(ze.graphCreate != nullptr);
    GraphOfEveryKind scenario;
    halPluginStream streams[2] = {};
    for (halPluginStream& stream : streams) {
        REQUIRE(ze.streamCreate(scenario.device, 0, 0, &stream) == HAL_SUCCESS);
    }
    halPluginGraph graph = nullptr;
    REQUIRE_PLUGIN_OK(ze.graphCreate(scenario.device, &scenario.desc, &graph));
    // The kernel's arguments were taken by value when the graph was made.
    scenario.value = 0xBAD;
    // On either stream in turn: a recording whose run has finished is submitted again, to
    // another immediate list.
    for (int launch = 0; launch < 4; ++launch) {
        halPluginStream stream = streams[launch % 2];
        scenario.clearResults();
        const uint64_t before = commandListSubmissions();
        REQUIRE_PLUGIN_OK(ze.graphLaunch(graph, stream));
        CHECK(commandListSubmissions() == before + 1);
        REQUIRE(ze.streamSynchronize(stream) == HAL_SUCCESS);
        scenario.checkResults();
    }
    CHECK(scenario.releases == 0);
    REQUIRE(ze.graphDestroy(graph) == HAL_SUCCESS);
    CHECK(scenario.releases == 1);
    for (halPluginStream stream : streams) REQUIRE(ze.streamDestroy(stream) == HAL_SUCCESS);
}

TEST_CASE("a launch never submits a recording that may still run, never blocks, and stays native",
          "[graph]") {
    const halPluginDispatchTable& ze = plugin();
    GraphOfEveryKind scenario;
    halPluginStream stream = nullptr;
    REQUIRE(ze.streamCreate(scenario.device, 0, 0, &stream) == HAL_SUCCESS);
    halPluginGraph graph = nullptr;
    REQUIRE_PLUGIN_OK(ze.graphCreate(scenario.device, &scenario.desc, &graph));
    scenario.value = 0xBAD;  // the replayed launches, too, use the value the graph took
    scenario.clearResults();

    // Behind a host function the stream's work is held on the host, then submitted as one: every
    // launch's recording, each followed by a list that begins with the launch's end, after the
    // list holding the work before them. The double ends the run if a recording that may still
    // run is submitted again. However many launches are in flight, none is replayed.
    constexpr int kLaunches = 9;
    Gate gate;
    REQUIRE(ze.launchHostFunc(stream, Gate::hold, &gate) == HAL_SUCCESS);
    const uint64_t before = commandListSubmissions();
    const uint64_t listsBefore = doubleCounter("zedoubleRegularListsSubmitted");
    for (int launch = 0; launch < kLaunches; ++launch) {
        REQUIRE_PLUGIN_OK(ze.graphLaunch(graph, stream));
    }
    CHECK(commandListSubmissions() == before);
    CHECK(ze.streamQuery(stream) == HAL_ERROR_NOT_READY);

    // Destroyed with its launches pending: released only once they have run.
    REQUIRE(ze.graphDestroy(graph) == HAL_SUCCESS);
    CHECK(scenario.releases == 0);
    gate.open = true;
    REQUIRE(ze.deviceSynchronize(scenario.device) == HAL_SUCCESS);
    CHECK(commandListSubmissions() == before + 1);
    CHECK(doubleCounter("zedoubleRegularListsSubmitted") == listsBefore + 2 * kLaunches + 1);
    CHECK(scenario.releases == 1);
    scenario.checkResults();
    REQUIRE(ze.streamDestroy(stream) == HAL_SUCCESS);
}

TEST_CASE("a device's close waits for its retired graphs and releases them", "[graph]") {
    const halPluginDispatchTable& ze = plugin();
    // The graph's memory and kernel come from the scenario's handle of the device, which stays
    // open; the graph and its stream from a second handle, closed with the launch pending.
    GraphOfEveryKind scenario;
    halPluginDevice device = nullptr;
    REQUIRE(ze.deviceOpen(0, &device) == HAL_SUCCESS);
    halPluginStream stream = nullptr;
    REQUIRE(ze.streamCreate(device, 0, 0, &stream) == HAL_SUCCESS);
    halPluginGraph graph = nullptr;
    REQUIRE_PLUGIN_OK(ze.graphCreate(device, &scenario.desc, &graph));
    scenario.clearResults();
    Gate gate;
    REQUIRE(ze.launchHostFunc(stream, Gate::hold, &gate) == HAL_SUCCESS);
    REQUIRE_PLUGIN_OK(ze.graphLaunch(graph, stream));
    REQUIRE(ze.graphDestroy(graph) == HAL_SUCCESS);
    REQUIRE(ze.streamDestroy(stream) == HAL_SUCCESS);
    CHECK(scenario.releases == 0);
    std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        gate.open = true;
    });
    ze.deviceClose(device);
    opener.join();
    CHECK(scenario.releases == 1);
    scenario.checkResults();
}

TEST_CASE("graphs a recorded command list cannot run as the eager calls would are declined",
          "[graph]") {
    const halPluginDispatchTable& ze = plugin();
    halPluginDevice device = nullptr;
    REQUIRE(ze.deviceOpen(0, &device) == HAL_SUCCESS);
    void* memory = nullptr;
    REQUIRE(ze.memAllocDevice(device, 256, &memory) == HAL_SUCCESS);
    std::vector<unsigned char> pageable(256);
    std::atomic<int> releases{0};
    halPluginGraphOp op{};
    halPluginGraphDesc desc{};
    desc.size = sizeof desc;
    desc.ops = &op;
    desc.numOps = 1;
    desc.opSize = sizeof op;
    desc.release = countRelease;
    desc.releaseContext = &releases;
    halPluginGraph graph = nullptr;

    SECTION("a host function") {
        op.kind = HAL_PLUGIN_GRAPH_OP_HOST_FUNCTION;
        op.params.hostFunction = {Gate::hold, nullptr};
        CHECK(ze.graphCreate(device, &desc, &graph) == HAL_ERROR_NOT_SUPPORTED);
        CHECK_THAT(polyhal::doubles::lastPluginError(), Catch::Contains("host function"));
    }
    SECTION("a copy from pageable host memory") {
        op.kind = HAL_PLUGIN_GRAPH_OP_COPY;
        op.params.copy = {memory, pageable.data(), pageable.size(), HAL_MEMCPY_HOST_TO_DEVICE};
        CHECK(ze.graphCreate(device, &desc, &graph) == HAL_ERROR_NOT_SUPPORTED);
        CHECK_THAT(polyhal::doubles::lastPluginError(), Catch::Contains("pageable"));
    }
    SECTION("a description older than the plugin's") {
        op.kind = HAL_PLUGIN_GRAPH_OP_MEMSET;
        op.params.memset = {memory, 256, 1};
        desc.opSize = sizeof op - 1;
        CHECK(ze.graphCreate(device, &desc, &graph) == HAL_ERROR_NOT_SUPPORTED);
        CHECK_THAT(polyhal::doubles::lastPluginError(), Catch::Contains("older"));
    }
    CHECK(graph == nullptr);
    CHECK(releases == 0);
    REQUIRE(ze.memFreeDevice(device, memory) == HAL_SUCCESS);
    ze.deviceClose(device);
}

namespace {

// Exports one allocation twice (the handles are one) and frees it; the double ends the run if
// the free leaves an IPC handle reference behind.
void exportTwiceAndFree() {
    const halPluginDispatchTable& ze = plugin();
    REQUIRE(ze.ipcMemGetHandle != nullptr);
    halPluginDevice device = nullptr;
    REQUIRE(ze.deviceOpen(0, &device) == HAL_SUCCESS);
    void* memory = nullptr;
    REQUIRE(ze.memAllocDevice(device, 4096, &memory) == HAL_SUCCESS);
    halPluginIpcHandle first{}, second{};
    REQUIRE_PLUGIN_OK(ze.ipcMemGetHandle(device, memory, &first));
    REQUIRE_PLUGIN_OK(ze.ipcMemGetHandle(device, memory, &second));
    CHECK(std::memcmp(first.bytes, second.bytes, sizeof first.bytes) == 0);
    REQUIRE(ze.memFreeDevice(device, memory) == HAL_SUCCESS);
    ze.deviceClose(device);
}

}  // namespace

TEST_CASE("an allocation exported many times takes one IPC handle, put back when it is freed",
          "[ipc]") {
    const uint64_t before = doubleCounter("zedoubleIpcHandlesPutBack");
    exportTwiceAndFree();
    CHECK(doubleCounter("zedoubleIpcHandlesPutBack") == before + 1);
}

TEST_CASE("without zeMemPutIpcHandle, the free drops an allocation's one IPC handle",
          "[ipc][debian_loader]") {
    const uint64_t before = doubleCounter("zedoubleIpcHandlesPutBack");
    exportTwiceAndFree();
    CHECK(doubleCounter("zedoubleIpcHandlesPutBack") == before);
}

TEST_CASE(
    "without the loader's zeCommandListImmediateAppendCommandListsExp, graphs are declined "
    "naming it",
    "[graph][debian_loader]") {
    const halPluginDispatchTable& ze = plugin();
    halPluginDevice device = nullptr;
    REQUIRE(ze.deviceOpen(0, &device) == HAL_SUCCESS);
    void* memory = nullptr;
    REQUIRE(ze.memAllocDevice(device, 256, &memory) == HAL_SUCCESS);
    halPluginGraphOp op{};
    op.kind = HAL_PLUGIN_GRAPH_OP_MEMSET;
    op.params.memset = {memory, 256, 1};
    halPluginGraphDesc desc{};
    desc.size = sizeof desc;
    desc.ops = &op;
    desc.numOps = 1;
    desc.opSize = sizeof op;
    halPluginGraph graph = nullptr;
    CHECK(ze.graphCreate(device, &desc, &graph) == HAL_ERROR_NOT_SUPPORTED);
    CHECK(graph == nullptr);
    CHECK_THAT(polyhal::doubles::lastPluginError(),
               Catch::Contains("does not export zeCommandListImmediateAppendCommandListsExp") &&
                   Catch::Contains("1.16"));
    REQUIRE(ze.memFreeDevice(device, memory) == HAL_SUCCESS);
    ze.deviceClose(device);
}

TEST_CASE("a copy from pageable memory may reuse the source as soon as the call returns",
          "[copies]") {
    const halPluginDispatchTable& ze = plugin();
    halPluginDevice device = nullptr;
    REQUIRE(ze.deviceOpen(0, &device) == HAL_SUCCESS);
    halPluginStream stream = nullptr;
    REQUIRE(ze.streamCreate(device, 0, 0, &stream) == HAL_SUCCESS);
    constexpr size_t kBytes = 4096;
    void* memory = nullptr;
    REQUIRE(ze.memAllocDevice(device, kBytes, &memory) == HAL_SUCCESS);
    std::vector<unsigned char> source(kBytes, 0x5A);
    std::vector<unsigned char> back(kBytes, 0);

    // The copy cannot run before the gate opens; the double reads pageable memory when it runs.
    Gate gate;
    REQUIRE(ze.launchHostFunc(stream, Gate::hold, &gate) == HAL_SUCCESS);
    REQUIRE_PLUGIN_OK(
        ze.memcpyAsync(stream, memory, source.data(), kBytes, HAL_MEMCPY_HOST_TO_DEVICE));
    std::fill(source.begin(), source.end(), 0xEE);
    gate.open = true;
    REQUIRE_PLUGIN_OK(
        ze.memcpyAsync(stream, back.data(), memory, kBytes, HAL_MEMCPY_DEVICE_TO_HOST));
    REQUIRE(ze.streamSynchronize(stream) == HAL_SUCCESS);
    CHECK(back == std::vector<unsigned char>(kBytes, 0x5A));

    REQUIRE(ze.streamDestroy(stream) == HAL_SUCCESS);
    REQUIRE(ze.memFreeDevice(device, memory) == HAL_SUCCESS);
    ze.deviceClose(device);
}

// Run alone (level_zero_double.plugin.device_lost): the loss lasts until the process exits.
TEST_CASE("a device lost to a GPU hang stays lost through a reset, which says so",
          "[device_lost]") {
    const halPluginDispatchTable& ze = plugin();
    REQUIRE(ze.deviceReset != nullptr);
    halPluginDevice device = nullptr;
    REQUIRE(ze.deviceOpen(0, &device) == HAL_SUCCESS);
    REQUIRE_PLUGIN_OK(ze.deviceReset(device));  // a healthy device: nothing to say
    halPluginModule module = loadCtsKernels(device);
    halPluginFunction blockSum = nullptr;
    REQUIRE(ze.moduleGetFunction(module, "block_sum", &blockSum) == HAL_SUCCESS);
    halPluginStream stream = nullptr;
    REQUIRE(ze.streamCreate(device, 0, 0, &stream) == HAL_SUCCESS);
    void* memory = nullptr;
    REQUIRE(ze.memAllocDevice(device, 4096, &memory) == HAL_SUCCESS);
    const uint32_t n = 64;
    const halKernelArg args[] = {
        {&memory, sizeof memory}, {&memory, sizeof memory}, {&n, sizeof n}};
    // Given less shared memory than it stages through, the kernel faults and the driver loses the
    // device.
    REQUIRE(ze.launchKernel(stream, blockSum, {1, 1, 1}, {64, 1, 1}, sizeof(uint32_t), args, 3) ==
            HAL_SUCCESS);
    CHECK(ze.streamSynchronize(stream) == HAL_ERROR_LAUNCH_FAILED);
    CHECK(ze.streamDestroy(stream) == HAL_SUCCESS);
    CHECK(ze.memFreeDevice(device, memory) == HAL_SUCCESS);
    CHECK(ze.moduleUnload(module) == HAL_SUCCESS);

    CHECK(ze.deviceReset(device) == HAL_ERROR_LAUNCH_FAILED);
    CHECK_THAT(polyhal::doubles::lastPluginError(),
               Catch::Contains("ZE_RESULT_ERROR_DEVICE_LOST") &&
                   Catch::Contains("until the process exits"));
    // Still lost: new work fails as the old did.
    REQUIRE(ze.streamCreate(device, 0, 0, &stream) == HAL_SUCCESS);
    REQUIRE(ze.memAllocDevice(device, 4096, &memory) == HAL_SUCCESS);
    REQUIRE(ze.memsetAsync(stream, memory, 0, 4096) == HAL_SUCCESS);
    CHECK(ze.streamSynchronize(stream) == HAL_ERROR_LAUNCH_FAILED);
    CHECK(ze.streamDestroy(stream) == HAL_SUCCESS);
    CHECK(ze.memFreeDevice(device, memory) == HAL_SUCCESS);
    ze.deviceClose(device);
}
