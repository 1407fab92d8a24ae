// polyhal-cts: the conformance suite's entry point. Prints which backend and devices are under
// test, then runs the Catch2 tests (any Catch2 command-line option works, e.g. a tag filter).
#define CATCH_CONFIG_RUNNER
#include <polyhal/hal.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ipc_process.hpp"

namespace {

void printCapabilities(uint64_t capabilities) {
    static const struct {
        uint64_t bit;
        const char* name;
    } kCapabilities[] = {
        {HAL_DEVICE_CAP_TIMING_EVENTS, "timing-events"},
        {HAL_DEVICE_CAP_HOST_FUNCTIONS, "host-functions"},
        {HAL_DEVICE_CAP_KERNELS, "kernels"},
        {HAL_DEVICE_CAP_STREAM_PRIORITIES, "stream-priorities"},
        {HAL_DEVICE_CAP_HOST_ACCESSIBLE, "host-accessible"},
        {HAL_DEVICE_CAP_NATIVE_HANDLES, "native-handles"},
        {HAL_DEVICE_CAP_PEER_COPY, "peer-copy"},
        {HAL_DEVICE_CAP_CONCURRENT_HOST_FUNCTIONS, "concurrent-host-functions"},
        {HAL_DEVICE_CAP_IPC_MEMORY, "ipc-memory"},
        {HAL_DEVICE_CAP_IPC_EVENTS, "ipc-events"},
        {HAL_DEVICE_CAP_HOST_REGISTER, "host-register"},
        {HAL_DEVICE_CAP_MANAGED_MEMORY, "managed-memory"},
    };
    for (const auto& capability : kCapabilities) {
        if ((capabilities & capability.bit) != 0) std::printf(" %s", capability.name);
    }
}

// Describes the system under test; returns false when polyhal cannot initialise.
bool printSystemUnderTest() {
    const halError status = halInit();
    if (status != HAL_SUCCESS) {
        std::fprintf(stderr, "polyhal-cts: halInit failed: %s: %s\n", halGetErrorName(status),
                     halGetLastErrorMessage());
        return false;
    }
    int count = 0;
    halGetDeviceCount(&count);
    std::printf("polyhal-cts: %d device(s)\n", count);
    for (int device = 0; device < count; ++device) {
        halDeviceProperties props;
        std::memset(&props, 0, sizeof props);
        props.size = sizeof props;
        if (halGetDeviceProperties(device, &props) != HAL_SUCCESS) continue;
        std::printf("  device %d: backend %s, %s, capabilities:", device, props.backend,
                    props.name);
        printCapabilities(props.capabilities);
        std::printf("\n");
    }
    std::fflush(stdout);
    return true;
}

}  // namespace

int main(int argc, char* argv[]) {
    // Started again by an IPC test as the other process: run that role instead of the suite.
    if (const char* role = std::getenv(cts::ipc::kChildVariable)) return cts::ipc::runChild(role);
    Catch::Session session;
    const int status = session.applyCommandLine(argc, argv);
    if (status != 0) return status;
    const Catch::ConfigData& config = session.configData();
    const bool runsTests = !(config.showHelp || config.listTests || config.listTestNamesOnly ||
                             config.listTags || config.listReporters);
    if (runsTests && !printSystemUnderTest()) return 1;
    return session.run();
}
