// What the benchmarks that run on several backends in one process share: aborting on a failed
// call, picking a backend's device, naming the devices in the results, and starting up.
#ifndef POLYHAL_TOOLS_BENCH_BENCH_SUPPORT_HPP_
#define POLYHAL_TOOLS_BENCH_BENCH_SUPPORT_HPP_

#include <benchmark/benchmark.h>
#include <polyhal/hal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace polyhal::bench {

inline void check(halError status, const char* what) {
    if (status != HAL_SUCCESS) {
        std::fprintf(stderr, "%s: %s: %s\n", what, halGetErrorName(status),
                     halGetLastErrorMessage());
        std::abort();
    }
}

// Makes the first device of `backend` current; skips the benchmark, saying so, when the
// backend is not loaded (`backends` is the POLYHAL_BACKEND value that would load it).
inline bool useBackend(benchmark::State& state, const char* backend, const char* backends) {
    int count = 0;
    check(halGetDeviceCount(&count), "halGetDeviceCount");
    for (int device = 0; device < count; ++device) {
        halDeviceProperties properties{};
        properties.size = sizeof properties;
        check(halGetDeviceProperties(device, &properties), "halGetDeviceProperties");
        if (std::strcmp(properties.backend, backend) == 0) {
            check(halSetDevice(device), "halSetDevice");
            return true;
        }
    }
    const std::string message =
        std::string("the ") + backend + " backend is not loaded (POLYHAL_BACKEND=" + backends + ")";
    state.SkipWithError(message.c_str());
    return false;
}

// Runs the benchmarks with POLYHAL_BACKEND defaulting to `backends` (an explicit value wins),
// the devices named in the results' context.
inline int runBenchmarks(int argc, char** argv, const char* backends) {
    setenv("POLYHAL_BACKEND", backends, 0);  // before the first polyhal call
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    if (halError status = halInit(); status != HAL_SUCCESS) {
        std::fprintf(stderr, "halInit: %s: %s\n", halGetErrorName(status),
                     halGetLastErrorMessage());
        return 1;
    }
    int count = 0;
    check(halGetDeviceCount(&count), "halGetDeviceCount");
    for (int device = 0; device < count; ++device) {
        halDeviceProperties properties{};
        properties.size = sizeof properties;
        check(halGetDeviceProperties(device, &properties), "halGetDeviceProperties");
        benchmark::AddCustomContext("polyhal device " + std::to_string(device),
                                    std::string(properties.backend) + ": " + properties.name);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

}  // namespace polyhal::bench

#endif  // POLYHAL_TOOLS_BENCH_BENCH_SUPPORT_HPP_
