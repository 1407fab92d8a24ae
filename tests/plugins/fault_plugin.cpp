// A fault-injecting backend: the CPU backend behind a dispatch table whose entries fail on
// demand, so that every error path of the core and the pool can be driven from a test.
//
//   POLYHAL_FAULT_AT=E:N      the N-th call (1-based) of entry E fails, e.g. streamQuery:2
//   POLYHAL_FAULT_RATE=P      each entry call fails with probability P (0..1)
//   POLYHAL_FAULT_SEED=S      the random sequence of POLYHAL_FAULT_RATE
//   POLYHAL_FAULT_REPORT=F    at exit, writes "calls C injected I asynchronous A" to file F,
//                             then a line "entry E C" for each entry called
//   POLYHAL_FAULT_CODE=V      an injected fault returns V (decimal or 0x...), a value outside
//                             halError, instead of the vendor-like code below
//   POLYHAL_FAULT_DEVICE_COUNTS=A,B,...
//                             deviceGetCount answers A, then B, ..., the last one from then on
//                             (negative and absurd counts included); deviceOpen opens any
//                             ordinal, as the CPU device of ordinal modulo the CPU's count
//
// Faults are placed by entry and ordinal rather than by position in the whole call sequence:
// how many probes (streamQuery, eventQuery) the core makes depends on timing, and so does the
// position of every later call, but the k-th memcpyAsync of a workload is the same call in
// every run.
//
// A failed entry reports what a vendor would: HAL_ERROR_OUT_OF_MEMORY from the allocation
// entries, HAL_ERROR_LAUNCH_FAILED (an asynchronous failure of earlier work) from
// streamSynchronize, streamQuery and deviceSynchronize, and HAL_ERROR_BACKEND elsewhere; its
// message is "injected fault in <entry>". Entries that release something (streamDestroy,
// eventDestroy, memFreeDevice, memFreeHost, moduleUnload, ipcMemCloseHandle, graphDestroy)
// release it and then report the failure, so that an injected fault never leaks on its own
// account; the waits wait first, as the plugin ABI requires of an asynchronous failure. Every
// entry of the table is wrapped (HAL_PLUGIN_ENTRIES) but deviceClose, which cannot fail, and
// backendGetInfo.
#include <polyhal/plugin.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu_backend.h"

namespace {

halPluginDispatchTable g_real;
const halPluginHost* g_host = nullptr;

class Injector {
  public:
    Injector() {
        const char* at = std::getenv("POLYHAL_FAULT_AT");
        const char* rate = std::getenv("POLYHAL_FAULT_RATE");
        const char* seed = std::getenv("POLYHAL_FAULT_SEED");
        if (at != nullptr) {
            const char* colon = std::strchr(at, ':');
            failEntry_.assign(at, colon != nullptr ? colon - at : std::strlen(at));
            failOrdinal_ = colon != nullptr ? std::strtoull(colon + 1, nullptr, 0) : 1;
        }
        rate_ = rate != nullptr ? std::strtod(rate, nullptr) : 0.0;
        random_.seed(seed != nullptr ? std::strtoull(seed, nullptr, 0) : 1);
        if (const char* code = std::getenv("POLYHAL_FAULT_CODE")) {
            code_ = static_cast<uint32_t>(std::strtoull(code, nullptr, 0));
            hasCode_ = true;
        }
        if (const char* counts = std::getenv("POLYHAL_FAULT_DEVICE_COUNTS")) {
            for (const char* at = counts; *at != '\0';) {
                char* end = nullptr;
                deviceCounts_.push_back(static_cast<int>(std::strtol(at, &end, 0)));
                at = *end == ',' ? end + 1 : end + std::strlen(end);
            }
        }
    }
    ~Injector() {
        const char* path = std::getenv("POLYHAL_FAULT_REPORT");
        if (path == nullptr) return;
        std::lock_guard<std::mutex> lock(mutex_);
        if (FILE* file = std::fopen(path, "w")) {
            std::fprintf(file, "calls %llu injected %llu asynchronous %llu\n",
                         static_cast<unsigned long long>(calls_),
                         static_cast<unsigned long long>(injected_),
                         static_cast<unsigned long long>(asynchronous_.load()));
            for (const auto& [entry, calls] : callsPerEntry_) {
                std::fprintf(file, "entry %s %llu\n", entry.c_str(),
                             static_cast<unsigned long long>(calls));
            }
            std::fclose(file);
        }
    }

    // Should this call of `entry` fail?
    bool strike(const char* entry) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++calls_;
        const uint64_t ordinal = ++callsPerEntry_[entry];
        bool fail = ordinal == failOrdinal_ && failEntry_ == entry;
        if (!fail && rate_ > 0) {
            fail = std::uniform_real_distribution<double>(0, 1)(random_) < rate_;
        }
        if (fail) ++injected_;
        return fail;
    }
    void countAsynchronous() { asynchronous_.fetch_add(1); }

    // The code an injected fault returns, when POLYHAL_FAULT_CODE chose it.
    bool hasCode() const { return hasCode_; }
    halError code() const {
        halError code;
        std::memcpy(&code, &code_, sizeof code);  // any 32 bits, as a C plugin may return
        return code;
    }

    bool answersDeviceCounts() const { return !deviceCounts_.empty(); }
    // The next of POLYHAL_FAULT_DEVICE_COUNTS' answers.
    int nextDeviceCount() {
        std::lock_guard<std::mutex> lock(mutex_);
        const size_t asked = deviceCountsAsked_++;
        return deviceCounts_[asked < deviceCounts_.size() ? asked : deviceCounts_.size() - 1];
    }

  private:
    std::string failEntry_;
    uint64_t failOrdinal_ = 0;
    double rate_ = 0;
    std::mutex mutex_;
    std::mt19937_64 random_;
    uint64_t calls_ = 0;
    uint64_t injected_ = 0;
    std::map<std::string, uint64_t> callsPerEntry_;
    std::atomic<uint64_t> asynchronous_{0};
    bool hasCode_ = false;
    uint32_t code_ = 0;
    std::vector<int> deviceCounts_;
    size_t deviceCountsAsked_ = 0;
};

Injector& injector() {
    static Injector instance;
    return instance;
}

enum class Kind { kOther, kAllocation, kAsynchronous, kRelease };

constexpr Kind kindOf(const char* entry) {
    const auto is = [entry](const char* name) {
        const char* a = entry;
        while (*a != '\0' && *a == *name) ++a, ++name;
        return *a == *name;
    };
    if (is("memAllocDevice") || is("memAllocHost")) return Kind::kAllocation;
    if (is("streamSynchronize") || is("streamQuery") || is("deviceSynchronize")) {
        return Kind::kAsynchronous;
    }
    if (is("streamDestroy") || is("eventDestroy") || is("memFreeDevice") || is("memFreeHost") ||
        is("moduleUnload") || is("ipcMemCloseHandle") || is("graphDestroy")) {
        return Kind::kRelease;
    }
    return Kind::kOther;
}

halError injectedFault(const char* entry) {
    char message[128];
    std::snprintf(message, sizeof message, "injected fault in %s", entry);
    std::fprintf(stderr, "fault plugin: %s\n", message);  // names the culprit of a failed run
    if (g_host != nullptr) g_host->setErrorMessage(message);
    if (injector().hasCode()) return injector().code();
    switch (kindOf(entry)) {
    case Kind::kAllocation: return HAL_ERROR_OUT_OF_MEMORY;
    case Kind::kAsynchronous: injector().countAsynchronous(); return HAL_ERROR_LAUNCH_FAILED;
    default: return HAL_ERROR_BACKEND;
    }
}

// Wraps entry `name` of the real table. A fault fails the call before it reaches the backend;
// a release is made first, and so is a wait, since a vendor reports an asynchronous failure
// only once the work it waited for is over (a real failure then goes first). An entry that
// returns nothing (deviceClose) cannot fail and is passed through.
#define POLYHAL_FAULT_WRAP(name)                                            \
    if (g_real.name != nullptr) {                                           \
        mine.name = [](auto... args) {                                      \
            if constexpr (std::is_void_v<decltype(g_real.name(args...))>) { \
                g_real.name(args...);                                       \
            } else {                                                        \
                if (!injector().strike(#name)) return g_real.name(args...); \
                const Kind kind = kindOf(#name);                            \
                if (kind == Kind::kRelease) (void)g_real.name(args...);     \
                if (kind == Kind::kAsynchronous) {                          \
                    const halError real = g_real.name(args...);             \
                    if (real == HAL_ERROR_LAUNCH_FAILED) return real;       \
                }                                                           \
                return injectedFault(#name);                                \
            }                                                               \
        };                                                                  \
    }

// POLYHAL_FAULT_DEVICE_COUNTS: a count that changes between calls, or is negative or absurd.
halError answerDeviceCount(int* count) {
    if (halError e = g_real.deviceGetCount(count)) return e;
    *count = injector().nextDeviceCount();
    return HAL_SUCCESS;
}

// Every ordinal opens, so that an absurd count is as costly as a plugin that has the devices.
halError openAnyDevice(int ordinal, halPluginDevice* device) {
    int real = 0;
    if (halError e = g_real.deviceGetCount(&real)) return e;
    return g_real.deviceOpen(ordinal < 0 ? ordinal : ordinal % real, device);
}

}  // namespace

extern "C" HAL_PLUGIN_EXPORT halError halPluginGetDispatchTable(uint32_t coreAbiVersion,
                                                                const halPluginHost* host,
                                                                halPluginDispatchTable* table) {
    if (host == nullptr || table == nullptr) return HAL_ERROR_INVALID_VALUE;
    g_host = host;
    g_real = {};
    g_real.size = sizeof g_real;
    if (halError e = polyhalCpuGetDispatchTable(coreAbiVersion, host, &g_real)) return e;
    halPluginDispatchTable mine = g_real;
    mine.name = "test_faults";
// backendGetInfo is left as it is: it runs at load, before any workload.
#define POLYHAL_FAULT_WRAP_ENTRY(entry, requirement, capabilities, group) \
    if (std::strcmp(#entry, "backendGetInfo") != 0) POLYHAL_FAULT_WRAP(entry)
    HAL_PLUGIN_ENTRIES(POLYHAL_FAULT_WRAP_ENTRY)
#undef POLYHAL_FAULT_WRAP_ENTRY
    if (injector().answersDeviceCounts()) {
        mine.deviceGetCount = answerDeviceCount;
        mine.deviceOpen = openAnyDevice;
    }
    const size_t size = table->size < sizeof mine ? table->size : sizeof mine;
    std::memcpy(table, &mine, size);
    table->size = size;
    return HAL_SUCCESS;
}
