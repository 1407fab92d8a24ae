// The level_zero plugin, loaded as the core loads it, against the driver double behind Debian's
// loader (two devices, POLYHAL_ZE_DOUBLE_DEVICES=2): entries the conformance suite cannot reach
// through the core.
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
