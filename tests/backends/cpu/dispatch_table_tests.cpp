// The entry point: version negotiation and the table it fills, for the embedded copy and for
// the libpolyhal_cpu.so plugin.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "backend_fixture.hpp"
#include "cpu_backend.h"

using namespace cpu_tests;

TEST_CASE("the CPU table names the backend and fills every entry it needs", "[dispatch]") {
    halPluginDispatchTable filled = {};
    filled.size = sizeof filled;
    REQUIRE(polyhalCpuGetDispatchTable(HAL_PLUGIN_ABI_VERSION, &testHost(), &filled) ==
            HAL_SUCCESS);
    CHECK(filled.size == sizeof filled);
    CHECK(filled.abiVersion == HAL_PLUGIN_ABI_VERSION);
    CHECK(std::strcmp(filled.name, "cpu") == 0);
    // Every member after `name` is an entry, and the CPU backend implements all of them except
    // peer access: its memory is host memory, which the core knows every device can reach; and
    // eventCompletionTime: its host functions run on the stream's worker between the commands,
    // which times a trace's spans exactly; deviceGetStreamPriorityRange: its range is known
    // without a device in use, and deviceGetInfo reports it; and deviceReset: a CPU device keeps
    // no state of its own once the core has destroyed its objects.
    const auto* entries = reinterpret_cast<void* const*>(
        reinterpret_cast<const char*>(&filled) + offsetof(halPluginDispatchTable, initialize));
    const size_t count =
        (sizeof filled - offsetof(halPluginDispatchTable, initialize)) / sizeof(void*);
    const auto index = [](size_t offset) {
        return (offset - offsetof(halPluginDispatchTable, initialize)) / sizeof(void*);
    };
    const size_t firstPeerEntry = index(offsetof(halPluginDispatchTable, deviceCanAccessPeer));
    const size_t lastPeerEntry = index(offsetof(halPluginDispatchTable, deviceDisablePeerAccess));
    const size_t clockEntry = index(offsetof(halPluginDispatchTable, eventCompletionTime));
    const size_t priorityEntry =
        index(offsetof(halPluginDispatchTable, deviceGetStreamPriorityRange));
    const size_t resetEntry = index(offsetof(halPluginDispatchTable, deviceReset));
    for (size_t i = 0; i < count; ++i) {
        INFO("entry " << i);
        const bool absent = (i >= firstPeerEntry && i <= lastPeerEntry) || i == clockEntry ||
                            i == priorityEntry || i == resetEntry;
        CHECK((entries[i] != nullptr) != absent);
    }
}

TEST_CASE("a core of another major ABI version is refused with both versions named", "[dispatch]") {
    halPluginDispatchTable filled = {};
    filled.size = sizeof filled;
    const uint32_t future = HAL_PLUGIN_MAKE_VERSION(HAL_PLUGIN_ABI_VERSION_MAJOR + 1, 0);
    REQUIRE(polyhalCpuGetDispatchTable(future, &testHost(), &filled) ==
            HAL_ERROR_BACKEND_INCOMPATIBLE);
    CHECK_THAT(lastError(),
               Catch::Contains("plugin ABI 1." + std::to_string(HAL_PLUGIN_ABI_VERSION_MINOR)) &&
                   Catch::Contains("2.0"));
    CHECK(filled.initialize == nullptr);
}

TEST_CASE("an older core's smaller table is filled only as far as it reaches", "[dispatch]") {
    halPluginDispatchTable filled;
    std::memset(&filled, 0, sizeof filled);
    const size_t olderSize = offsetof(halPluginDispatchTable, streamGetNativeHandle);
    filled.size = olderSize;
    REQUIRE(polyhalCpuGetDispatchTable(HAL_PLUGIN_ABI_VERSION, &testHost(), &filled) ==
            HAL_SUCCESS);
    CHECK(filled.size == olderSize);
    CHECK(filled.launchKernel != nullptr);
    CHECK(filled.streamGetNativeHandle == nullptr);
}

TEST_CASE("the plugin library exports exactly the standard entry point", "[dispatch]") {
    void* plugin = dlopen(POLYHAL_CPU_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    INFO((plugin == nullptr ? dlerror() : ""));
    REQUIRE(plugin != nullptr);
    CHECK(dlsym(plugin, "polyhalCpuGetDispatchTable") == nullptr);
    auto entry = reinterpret_cast<halPluginEntryFn>(dlsym(plugin, HAL_PLUGIN_ENTRY_NAME));
    REQUIRE(entry != nullptr);
    halPluginDispatchTable filled = {};
    filled.size = sizeof filled;
    CHECK(entry(HAL_PLUGIN_ABI_VERSION, &testHost(), &filled) == HAL_SUCCESS);
    CHECK(std::strcmp(filled.name, "cpu") == 0);
    // Not unloaded: plugins never are, and this one's table now refers to its code.
}
