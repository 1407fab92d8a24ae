// A fixed sequence of public calls over the core and the pool, run against the fault-injecting
// backend (fault_plugin.cpp) by fault_injection_tests. It checks what must hold whatever entry
// fails: every failing call gives an error and a message naming the injected fault, a call
// whose inputs could not be made is skipped, no block is handed out twice, and every
// asynchronous failure is reported exactly once. It prints "reported <r> real <k>" (asynchronous
// failures seen; failing kernels launched) and exits 0 when all held, 1 otherwise.
// POLYHAL_FAULT_KERNELS names the CPU kernel image (the conformance kernels).
#include <polyhal/hal.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace {

int g_violations = 0;
int g_reported = 0;      // asynchronous failures the calls reported
int g_realFailures = 0;  // launches of fail_with_code that were accepted

// Checks one call's result: success, or a failure that explains itself.
bool ok(halError result, const char* call) {
    if (result == HAL_SUCCESS) return true;
    if (result == HAL_ERROR_NOT_READY) return false;
    if (std::strcmp(halGetErrorName(result), "HAL_ERROR_UNRECOGNIZED") == 0) {
        std::printf("violation: %s -> %u, which is not a halError\n", call,
                    static_cast<unsigned>(result));
        ++g_violations;
    }
    if (result == HAL_ERROR_LAUNCH_FAILED) ++g_reported;
    const std::string message = halGetLastErrorMessage();
    // POLYHAL_FAULT_CODE: the core says which entry answered what instead of a halError.
    if (std::getenv("POLYHAL_FAULT_CODE") != nullptr &&
        message.find("injected fault in ") != std::string::npos &&
        message.find("which is not a halError") == std::string::npos) {
        std::printf("violation: %s -> %s with message '%s', which does not name the code\n", call,
                    halGetErrorName(result), message.c_str());
        ++g_violations;
    }
    if (message.find("injected fault in ") == std::string::npos &&
        message.find("'fail_with_code'") == std::string::npos) {
        std::printf("violation: %s -> %s with message '%s'\n", call, halGetErrorName(result),
                    message.c_str());
        ++g_violations;
    }
    return false;
}
#define OK(call) ok((call), #call)

// Live blocks, by start: a new block must not overlap any of them.
std::map<uintptr_t, size_t> g_live;

void handedOut(void* block, size_t size) {
    const auto start = reinterpret_cast<uintptr_t>(block);
    auto next = g_live.lower_bound(start);
    const bool overlapsNext = next != g_live.end() && next->first < start + size;
    const bool overlapsPrevious =
        next != g_live.begin() && std::prev(next)->first + std::prev(next)->second > start;
    if (overlapsNext || overlapsPrevious) {
        std::printf("violation: block %p of %zu bytes overlaps a live block\n", block, size);
        ++g_violations;
    }
    g_live[start] = size;
}
void returned(void* block) {
    g_live.erase(reinterpret_cast<uintptr_t>(block));
}

void hostFunction(void* counter) {
    ++*static_cast<int*>(counter);
}

}  // namespace

int main() {
    const char* kernels = std::getenv("POLYHAL_FAULT_KERNELS");
    int hostCalls = 0;
    halStream streams[2] = {};
    bool made[2] = {};
    for (int i = 0; i < 2; ++i) made[i] = OK(halCreateStream(&streams[i]));
    halEvent event = nullptr;
    const bool haveEvent = OK(halCreateEvent(&event));

    void* a = nullptr;
    void* b = nullptr;
    void* c = nullptr;
    const size_t sizes[] = {4096, 300000, 5u << 20};
    const bool haveA = OK(halMalloc(&a, sizes[0]));
    if (haveA) handedOut(a, sizes[0]);
    const bool haveB = made[0] && OK(halMallocAsync(&b, sizes[1], streams[0]));
    if (haveB) handedOut(b, sizes[1]);
    const bool haveC = made[1] && OK(halMallocAsync(&c, sizes[2], streams[1]));
    if (haveC) handedOut(c, sizes[2]);
    void* pinned = nullptr;
    const bool havePinned = OK(halMallocHost(&pinned, 4096));

    if (haveA) OK(halMemset(a, sizes[0], 0x11, sizes[0]));
    if (haveB) OK(halMemsetAsync(b, sizes[1], 0x22, sizes[1], streams[0]));
    if (haveA && haveB) {
        OK(halMemcpyAsync(b, sizes[1], a, sizes[0], HAL_MEMCPY_DEFAULT, streams[0]));
    }
    // Stream 1 reads b only once it is ordered after stream 0's writes: after a failed record or
    // wait, reading it would be the workload's own race, not polyhal's.
    bool ordered = false;
    if (haveEvent && made[0] && OK(halRecordEvent(event, streams[0]))) {
        ordered = made[1] && OK(halStreamWaitEvent(streams[1], event));
    }
    if (haveB && ordered) {
        OK(halRecordStream(b, streams[1]));
        OK(halMemcpyAsync(c, sizes[2], b, sizes[1], HAL_MEMCPY_DEFAULT, streams[1]));
    }
    if (made[1]) OK(halLaunchHostFunc(streams[1], hostFunction, &hostCalls));
    if (havePinned && haveA) OK(halMemcpy(pinned, 4096, a, 4096, HAL_MEMCPY_DEVICE_TO_HOST));

    halModule module = nullptr;
    if (kernels != nullptr && OK(halModuleLoadFile(&module, kernels))) {
        halFunction fill = nullptr;
        halFunction failing = nullptr;
        if (haveC && OK(halModuleGetFunction(&fill, module, "fill_u32"))) {
            const uint32_t value = 7, n = 1024;
            const halKernelArg args[] = {{&c, sizeof c}, {&value, sizeof value}, {&n, sizeof n}};
            OK(halLaunchKernel(fill, {4, 1, 1}, {256, 1, 1}, 0, args, 3, streams[1]));
        }
        if (made[0] && OK(halModuleGetFunction(&failing, module, "fail_with_code"))) {
            // A real asynchronous failure, beside the injected ones.
            if (OK(halLaunchKernel(failing, {1, 1, 1}, {1, 1, 1}, 0, nullptr, 0, streams[0]))) {
                ++g_realFailures;
            }
        }
    }

    // A graph, captured, launched twice and destroyed: a native one where the backend builds
    // it, replayed by the core where it declines or fails to. Each launch that succeeded runs
    // the graph's host function once, and a refused one at most once: a launch refused after
    // its graph was enqueued (its end not recorded) still runs it (checked after the drain).
    int graphHostCalls = 0;
    int graphLaunches = 0;
    int graphAttempts = 0;
    void* graphed = nullptr;
    const bool haveGraphed = made[0] && OK(halMalloc(&graphed, 4096));
    if (haveGraphed) handedOut(graphed, 4096);
    if (haveGraphed && OK(halStreamBeginCapture(streams[0], HAL_CAPTURE_MODE_GLOBAL))) {
        OK(halMemsetAsync(graphed, 4096, 0x33, 4096, streams[0]));
        OK(halLaunchHostFunc(streams[0], hostFunction, &graphHostCalls));
        halGraph graph = nullptr;
        if (OK(halStreamEndCapture(streams[0], &graph))) {
            for (int launch = 0; launch < 2; ++launch) {
                ++graphAttempts;
                if (OK(halGraphLaunch(graph, streams[0]))) ++graphLaunches;
            }
            OK(halGraphDestroy(graph));
        }
    }

    if (haveB) {
        if (made[0] && OK(halFreeAsync(b, streams[0]))) returned(b);
    }
    void* again = nullptr;
    if (made[1] && OK(halMallocAsync(&again, sizes[1], streams[1]))) {
        handedOut(again, sizes[1]);
        if (OK(halFreeAsync(again, streams[1]))) returned(again);
    }
    if (haveEvent) OK(halQueryEvent(event));
    for (int i = 0; i < 2; ++i) {
        if (made[i]) OK(halQueryStream(streams[i]));
    }
    halMemPoolStats stats = {};
    stats.size = sizeof stats;
    OK(halMemPoolGetStats(0, &stats));
    OK(halMemPoolTrim(0, 0));
    if (haveA && OK(halFree(a))) returned(a);
    if (haveGraphed && OK(halFree(graphed))) returned(graphed);
    if (haveC && made[1] && OK(halFreeAsync(c, streams[1]))) returned(c);
    if (module != nullptr) OK(halModuleUnload(module));
    if (havePinned) OK(halFreeHost(pinned));

    // Drain: every asynchronous failure still unreported comes out here, one per call.
    for (int round = 0; round < 64; ++round) {
        bool clean = true;
        for (int i = 0; i < 2; ++i) {
            if (made[i] && !OK(halSynchronizeStream(streams[i]))) clean = false;
        }
        if (!OK(halSynchronizeDevice())) clean = false;
        if (clean) break;
    }
    if (haveEvent) OK(halDestroyEvent(event));
    for (int i = 0; i < 2; ++i) {
        if (made[i]) OK(halDestroyStream(streams[i]));
    }
    for (int round = 0; round < 64 && !OK(halSynchronizeDevice()); ++round) {
    }
    if (graphHostCalls < graphLaunches || graphHostCalls > graphAttempts) {
        std::printf(
            "violation: %d of %d graph launches succeeded, their host function ran %d "
            "times\n",
            graphLaunches, graphAttempts, graphHostCalls);
        ++g_violations;
    }
    std::printf("reported %d real %d\n", g_reported, g_realFailures);
    return g_violations == 0 ? 0 : 1;
}
