// The Level Zero plugin loaded with dlopen, as the core loads it. There is no Intel GPU where
// these tests run, so what they check is the part a user without one relies on: the plugin
// loads everywhere, offers every entry, and says clearly why there is no device.
#include <dlfcn.h>

#include <polyhal/plugin.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <string>

namespace {

thread_local std::string tLastError;

void hostLog(halLogLevel, const char*) {}
int hostShouldLog(halLogLevel) {
    return 0;
}
void hostSetErrorMessage(const char* message) {
    tLastError = message;
}

const halPluginHost kHost = {sizeof(halPluginHost), HAL_PLUGIN_ABI_VERSION, hostLog, hostShouldLog,
                             hostSetErrorMessage};

halPluginEntryFn loadEntry() {
    void* library = dlopen(POLYHAL_LEVEL_ZERO_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    INFO("dlopen: " << (library == nullptr ? dlerror() : "ok"));
    REQUIRE(library != nullptr);
    auto entry = reinterpret_cast<halPluginEntryFn>(dlsym(library, HAL_PLUGIN_ENTRY_NAME));
    REQUIRE(entry != nullptr);
    return entry;
}

halPluginDispatchTable negotiatedTable() {
    halPluginDispatchTable table{};
    table.size = sizeof table;
    REQUIRE(loadEntry()(HAL_PLUGIN_ABI_VERSION, &kHost, &table) == HAL_SUCCESS);
    return table;
}

}  // namespace

TEST_CASE("the plugin loads with every symbol resolved, without linking Level Zero", "[load]") {
    void* library = dlopen(POLYHAL_LEVEL_ZERO_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    INFO("dlopen: " << (library == nullptr ? dlerror() : "ok"));
    REQUIRE(library != nullptr);
    CHECK(dlsym(library, HAL_PLUGIN_ENTRY_NAME) != nullptr);
    // Level Zero is resolved at run time, never linked: the loader's symbols are not the plugin's.
    CHECK(dlsym(library, "zeInit") == nullptr);
}

TEST_CASE("negotiation fills the whole table", "[load]") {
    const halPluginDispatchTable table = negotiatedTable();
    CHECK(table.size == sizeof(halPluginDispatchTable));
    CHECK(table.abiVersion == HAL_PLUGIN_ABI_VERSION);
    REQUIRE(table.name != nullptr);
    CHECK(std::string(table.name) == "level_zero");

    // Required entries.
    CHECK(table.initialize != nullptr);
    CHECK(table.deviceGetCount != nullptr);
    CHECK(table.deviceOpen != nullptr);
    CHECK(table.deviceClose != nullptr);
    CHECK(table.deviceGetInfo != nullptr);
    CHECK(table.deviceSynchronize != nullptr);
    CHECK(table.streamCreate != nullptr);
    CHECK(table.streamDestroy != nullptr);
    CHECK(table.streamSynchronize != nullptr);
    CHECK(table.streamQuery != nullptr);
    CHECK(table.streamWaitEvent != nullptr);
    CHECK(table.eventCreate != nullptr);
    CHECK(table.eventDestroy != nullptr);
    CHECK(table.eventRecord != nullptr);
    CHECK(table.eventQuery != nullptr);
    CHECK(table.eventSynchronize != nullptr);
    CHECK(table.memAllocDevice != nullptr);
    CHECK(table.memFreeDevice != nullptr);
    CHECK(table.memcpyAsync != nullptr);
    CHECK(table.memsetAsync != nullptr);

    // Level Zero offers every optional feature, so every optional entry is implemented.
    CHECK(table.eventElapsedTime != nullptr);
    CHECK(table.memAllocHost != nullptr);
    CHECK(table.memFreeHost != nullptr);
    CHECK(table.launchHostFunc != nullptr);
    CHECK(table.moduleLoadData != nullptr);
    CHECK(table.moduleUnload != nullptr);
    CHECK(table.moduleGetFunction != nullptr);
    CHECK(table.launchKernel != nullptr);
    CHECK(table.streamGetNativeHandle != nullptr);
    CHECK(table.memcpyPeerAsync != nullptr);
}

TEST_CASE("a core of another major ABI version is refused", "[load]") {
    halPluginDispatchTable table{};
    table.size = sizeof table;
    tLastError.clear();
    const uint32_t nextMajor = HAL_PLUGIN_MAKE_VERSION(HAL_PLUGIN_ABI_VERSION_MAJOR + 1, 0);
    CHECK(loadEntry()(nextMajor, &kHost, &table) == HAL_ERROR_BACKEND_INCOMPATIBLE);
    CHECK_THAT(tLastError, Catch::Contains("level_zero"));
}

TEST_CASE("an older core with a smaller table gets only the entries it knows", "[load]") {
    halPluginDispatchTable table{};
    const size_t olderSize = offsetof(halPluginDispatchTable, streamGetNativeHandle);
    table.size = olderSize;
    REQUIRE(loadEntry()(HAL_PLUGIN_ABI_VERSION, &kHost, &table) == HAL_SUCCESS);
    CHECK(table.size == olderSize);
    CHECK(table.launchKernel != nullptr);
    CHECK(table.streamGetNativeHandle == nullptr);
}

TEST_CASE("without a Level Zero GPU, initialize reports HAL_ERROR_NO_DEVICE and why", "[driver]") {
    const halPluginDispatchTable table = negotiatedTable();
    tLastError.clear();
    const halError status = table.initialize();
    if (status == HAL_SUCCESS) {
        // A machine with an Intel GPU and its driver: the no-driver path cannot happen here.
        int count = 0;
        REQUIRE(table.deviceGetCount(&count) == HAL_SUCCESS);
        CHECK(count >= 1);
        return;
    }
    INFO("message: " << tLastError);
    REQUIRE(status == HAL_ERROR_NO_DEVICE);
    CHECK_THAT(tLastError, Catch::Contains("Level Zero"));
    // Either the loader is installed and its verdict is quoted by name, or dlopen's reason is.
    const bool namesCause = tLastError.find("ZE_RESULT_") != std::string::npos ||
                            tLastError.find("libze_loader.so.1") != std::string::npos;
    CHECK(namesCause);
}
