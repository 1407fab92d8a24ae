// The cuda plugin's dispatch table called directly, as the core calls it, against the
// libcuda.so.1 double with two devices: the entries the core does not reach yet on its own.
#include <polyhal/plugin.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>

#include "plugin_table.hpp"

namespace {

const halPluginDispatchTable& plugin() {
    return polyhal::doubles::pluginTable(POLYHAL_CUDA_PLUGIN);
}

}  // namespace

TEST_CASE("a copy between two devices goes through the vendor's peer path, in stream order",
          "[cuda][peer]") {
    const halPluginDispatchTable& table = plugin();
    REQUIRE(table.size >= offsetof(halPluginDispatchTable, memcpyPeerAsync) + sizeof(void*));
    REQUIRE(table.memcpyPeerAsync != nullptr);
    halPluginDevice devices[2] = {};
    REQUIRE_PLUGIN_OK(table.deviceOpen(0, &devices[0]));
    REQUIRE_PLUGIN_OK(table.deviceOpen(1, &devices[1]));
    for (halPluginDevice device : devices) {
        halPluginDeviceInfo info{};
        info.size = sizeof info;
        REQUIRE_PLUGIN_OK(table.deviceGetInfo(device, &info));
        CHECK((info.capabilities & HAL_DEVICE_CAP_PEER_COPY) != 0);
    }
    constexpr size_t kSize = 1 << 16;
    void* source = nullptr;
    void* target = nullptr;
    void* host = nullptr;
    REQUIRE_PLUGIN_OK(table.memAllocDevice(devices[0], kSize, &source));
    REQUIRE_PLUGIN_OK(table.memAllocDevice(devices[1], kSize, &target));
    REQUIRE_PLUGIN_OK(table.memAllocHost(devices[1], kSize, &host));
    halPluginStream stream = nullptr;
    REQUIRE_PLUGIN_OK(table.streamCreate(devices[1], 0, 0, &stream));

    REQUIRE_PLUGIN_OK(table.memsetAsync(stream, target, 0, kSize));
    // The second copy runs on the source device's stream, which nothing orders after this fill.
    REQUIRE_PLUGIN_OK(table.streamSynchronize(stream));
    halPluginStream sourceStream = nullptr;
    REQUIRE_PLUGIN_OK(table.streamCreate(devices[0], 0, 0, &sourceStream));
    REQUIRE_PLUGIN_OK(table.memsetAsync(sourceStream, source, 0x5a, kSize));
    REQUIRE_PLUGIN_OK(table.streamSynchronize(sourceStream));
    // On a stream of the destination device, then of the source device.
    REQUIRE_PLUGIN_OK(
        table.memcpyPeerAsync(stream, target, devices[1], source, devices[0], kSize / 2));
    REQUIRE_PLUGIN_OK(table.memcpyPeerAsync(sourceStream, static_cast<char*>(target) + kSize / 2,
                                            devices[1], static_cast<char*>(source) + kSize / 2,
                                            devices[0], kSize / 2));
    REQUIRE_PLUGIN_OK(table.streamSynchronize(sourceStream));
    REQUIRE_PLUGIN_OK(table.memcpyAsync(stream, host, target, kSize, HAL_MEMCPY_DEVICE_TO_HOST));
    REQUIRE_PLUGIN_OK(table.streamSynchronize(stream));
    const auto* bytes = static_cast<const unsigned char*>(host);
    size_t wrong = 0;
    for (size_t i = 0; i < kSize; ++i) wrong += bytes[i] != 0x5a;
    CHECK(wrong == 0);

    REQUIRE_PLUGIN_OK(table.streamDestroy(stream));
    REQUIRE_PLUGIN_OK(table.streamDestroy(sourceStream));
    REQUIRE_PLUGIN_OK(table.memFreeHost(devices[1], host));
    REQUIRE_PLUGIN_OK(table.memFreeDevice(devices[0], source));
    REQUIRE_PLUGIN_OK(table.memFreeDevice(devices[1], target));
    table.deviceClose(devices[0]);
    table.deviceClose(devices[1]);
}

TEST_CASE("a device whose driver says it cannot share events has no IPC events", "[cuda][ipc]") {
    const halPluginDispatchTable& table = plugin();
    halPluginDevice device = nullptr;
    REQUIRE_PLUGIN_OK(table.deviceOpen(0, &device));
    auto capabilities = [&] {
        halPluginDeviceInfo info{};
        info.size = sizeof info;
        REQUIRE_PLUGIN_OK(table.deviceGetInfo(device, &info));
        return info.capabilities;
    };
    CHECK((capabilities() & HAL_DEVICE_CAP_IPC_EVENTS) != 0);
    // CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED is 0, as on WSL: the calls exist, the device cannot.
    setenv("POLYHAL_CUDA_DOUBLE_IPC_EVENTS", "0", 1);
    const uint64_t without = capabilities();
    unsetenv("POLYHAL_CUDA_DOUBLE_IPC_EVENTS");
    CHECK((without & HAL_DEVICE_CAP_IPC_EVENTS) == 0);
    CHECK((without & HAL_DEVICE_CAP_IPC_MEMORY) != 0);
    table.deviceClose(device);
}
