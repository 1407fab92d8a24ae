// Fault injection: the workload (fault_workload.cpp) against the fault-injecting backend
// (fault_plugin.cpp), once with each entry call failing in turn and then with faults at random.
// Each run is a child process, so that a crash, a hang, a sanitizer report (leaks included)
// or a broken invariant fails the test with the run that caused it.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include "child_process.hpp"

using polyhal::test::ChildResult;
using polyhal::test::runChild;

namespace {

struct Report {
    unsigned long long calls = 0, injected = 0, asynchronous = 0;
    std::map<std::string, unsigned long long> callsPerEntry;
};

struct Run {
    ChildResult child;
    Report report;
    int reported = -1, real = -1;
};

Run runWorkload(const std::vector<std::string>& faults) {
    const std::string reportPath =
        std::string(POLYHAL_FAULT_REPORT_DIR) + "/fault-report-" + std::to_string(getpid());
    std::remove(reportPath.c_str());
    Run run;
    std::vector<std::string> environment = {
        "POLYHAL_BACKEND=" POLYHAL_FAULT_PLUGIN, "POLYHAL_FAULT_KERNELS=" POLYHAL_CPU_KERNELS,
        "POLYHAL_FAULT_REPORT=" + reportPath, "POLYHAL_LOG_LEVEL=off"};
    environment.insert(environment.end(), faults.begin(), faults.end());
    run.child = runChild(POLYHAL_FAULT_WORKLOAD, environment, 60);
    std::ifstream file(reportPath);
    std::string word;
    file >> word >> run.report.calls >> word >> run.report.injected >> word >>
        run.report.asynchronous;
    std::string entry;
    unsigned long long calls = 0;
    while (file >> word >> entry >> calls) run.report.callsPerEntry[entry] = calls;
    std::remove(reportPath.c_str());
    const size_t summary = run.child.out.find("reported ");
    if (summary != std::string::npos) {
        std::sscanf(run.child.out.c_str() + summary, "reported %d real %d", &run.reported,
                    &run.real);
    }
    return run;
}

void checkRun(const Run& run, const std::string& faults) {
    INFO(faults << "\nstdout:\n" << run.child.out << "\nstderr:\n" << run.child.err);
    REQUIRE(run.child.exitStatus == 0);
    // Every asynchronous failure, injected or real, was reported exactly once.
    CHECK(run.reported >= 0);
    CHECK(static_cast<unsigned long long>(run.reported) ==
          run.report.asynchronous + static_cast<unsigned long long>(run.real));
}

}  // namespace

TEST_CASE("each entry call of the workload failing in turn breaks nothing", "[faults]") {
    const Run clean = runWorkload({});
    checkRun(clean, "no faults");
    REQUIRE(clean.report.calls > 30);
    REQUIRE(clean.report.injected == 0);
    REQUIRE(clean.report.callsPerEntry.size() > 20);
    // The core hands the workload's graph to the backend's native entries: built once, launched
    // twice as one operation each, destroyed once.
    const auto callsOf = [&clean](const char* entry) {
        const auto found = clean.report.callsPerEntry.find(entry);
        return found != clean.report.callsPerEntry.end() ? found->second : 0;
    };
    CHECK(callsOf("graphCreate") == 1);
    CHECK(callsOf("graphLaunch") == 2);
    CHECK(callsOf("graphDestroy") == 1);
    // A run makes each entry's first call whatever the timing; how many further calls it makes
    // of the probes (and of what follows a probe's answer) varies a little, so a run may end
    // before its faulty call: then it injects nothing.
    unsigned long long injected = 0;
    for (const auto& [entry, calls] : clean.report.callsPerEntry) {
        for (unsigned long long ordinal = 1; ordinal <= calls; ++ordinal) {
            const std::string faults = "POLYHAL_FAULT_AT=" + entry + ":" + std::to_string(ordinal);
            const Run run = runWorkload({faults});
            checkRun(run, faults);
            const auto made = run.report.callsPerEntry.find(entry);
            const bool reached = made != run.report.callsPerEntry.end() && made->second >= ordinal;
            INFO(faults << ": " << (made != run.report.callsPerEntry.end() ? made->second : 0)
                        << " calls of " << entry);
            CHECK(run.report.injected == (reached ? 1u : 0u));
            if (ordinal == 1) CHECK(reached);
            injected += run.report.injected;
        }
    }
    std::printf(
        "fault injection: %llu entry calls of %zu entries, each failed once: %llu faults "
        "injected\n",
        clean.report.calls, clean.report.callsPerEntry.size(), injected);
}

TEST_CASE("each entry answering a code outside halError reaches the caller as HAL_ERROR_BACKEND",
          "[faults]") {
    const Run clean = runWorkload({});
    checkRun(clean, "no faults");
    REQUIRE(clean.report.callsPerEntry.size() > 20);
    // The first call of every entry the workload makes (initialize and deviceGetCount among
    // them) answers 0x1234; the workload checks that no call returns it and that each failure's
    // message names the entry and the value.
    for (const auto& entry : clean.report.callsPerEntry) {
        const std::string faults = "POLYHAL_FAULT_AT=" + entry.first + ":1";
        const Run run = runWorkload({faults, "POLYHAL_FAULT_CODE=0x1234"});
        checkRun(run, faults + " POLYHAL_FAULT_CODE=0x1234");
        CHECK(run.report.injected == 1);
    }
}

namespace {

// polyhal_loader_probe's "key: value" lines.
std::map<std::string, std::string> probe(const std::vector<std::string>& environment,
                                         std::string* transcript) {
    const ChildResult child = polyhal::test::runChild(POLYHAL_LOADER_PROBE, environment);
    *transcript = "exit " + std::to_string(child.exitStatus) + "\n--- stdout\n" + child.out +
                  "--- stderr\n" + child.err;
    std::map<std::string, std::string> fields;
    size_t at = 0;
    for (size_t end; (end = child.out.find('\n', at)) != std::string::npos; at = end + 1) {
        const std::string line = child.out.substr(at, end - at);
        const size_t colon = line.find(": ");
        if (colon != std::string::npos) fields[line.substr(0, colon)] = line.substr(colon + 2);
    }
    fields["exit"] = std::to_string(child.exitStatus);
    return fields;
}

}  // namespace

TEST_CASE("a plugin whose device count changes, is negative or is absurd is refused", "[faults]") {
    struct Case {
        const char* counts;  // POLYHAL_FAULT_DEVICE_COUNTS
        const char* init;
        const char* message;
    };
    const Case cases[] = {
        {"1,0", "HAL_ERROR_BACKEND_INCOMPATIBLE",
         "test_faults (" POLYHAL_FAULT_PLUGIN "): deviceGetCount answered 1, then 0 once"},
        {"2,-1", "HAL_ERROR_BACKEND_INCOMPATIBLE", "deviceGetCount answered 2, then -1 once"},
        {"-1", "HAL_ERROR_BACKEND_INCOMPATIBLE",
         "test_faults (" POLYHAL_FAULT_PLUGIN "): deviceGetCount answered -1, a negative"},
        {"-2147483648", "HAL_ERROR_BACKEND_INCOMPATIBLE", "answered -2147483648, a negative"},
        {"1025", "HAL_ERROR_BACKEND_INCOMPATIBLE",
         "deviceGetCount answered 1025 devices, more than the 1024"},
        {"2147483647", "HAL_ERROR_BACKEND_INCOMPATIBLE",
         "deviceGetCount answered 2147483647 devices, more than the 1024"},
        {"0", "HAL_ERROR_NO_DEVICE", "test_faults: the backend loaded but reports no device"},
        {"3", "HAL_SUCCESS", ""},
    };
    for (const Case& c : cases) {
        std::string transcript;
        const auto fields = probe({"POLYHAL_BACKEND=" POLYHAL_FAULT_PLUGIN,
                                   std::string("POLYHAL_FAULT_DEVICE_COUNTS=") + c.counts},
                                  &transcript);
        INFO("POLYHAL_FAULT_DEVICE_COUNTS=" << c.counts << "\n" << transcript);
        REQUIRE(fields.at("exit") == "0");
        REQUIRE(fields.count("init") == 1);
        CHECK(fields.at("init") == c.init);
        if (std::string(c.init) == "HAL_SUCCESS") {
            // Every ordinal the plugin counted opens, and each device works.
            CHECK(fields.at("devices") == "3");
            CHECK(fields.at("copy 2 -> 0") == "HAL_SUCCESS");
            continue;
        }
        CHECK(fields.at("message").find(c.message) != std::string::npos);
        // The next call fails the same way, and crashes nothing.
        CHECK(fields.at("later-call") == std::string(c.init) + ", same-message: yes");
    }
}

TEST_CASE("faults at random break nothing", "[faults]") {
    const int runs = std::getenv("POLYHAL_FAULT_RUNS") != nullptr
                         ? std::atoi(std::getenv("POLYHAL_FAULT_RUNS"))
                         : 40;
    unsigned long long injected = 0;
    for (int seed = 1; seed <= runs; ++seed) {
        const Run run =
            runWorkload({"POLYHAL_FAULT_RATE=0.05", "POLYHAL_FAULT_SEED=" + std::to_string(seed)});
        checkRun(run, "POLYHAL_FAULT_RATE=0.05 POLYHAL_FAULT_SEED=" + std::to_string(seed));
        injected += run.report.injected;
    }
    std::printf("fault injection: %d random runs, %llu faults injected\n", runs, injected);
    CHECK(injected > 0);
}
