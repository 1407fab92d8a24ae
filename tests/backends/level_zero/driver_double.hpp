// A Level Zero driver double: the objects behind the handles it hands out, and its rules.
//
// The loader (libze_loader.so.1) loads it as a driver (ZE_ENABLE_ALT_DRIVERS) and reaches it
// through the zeGet*ProcAddrTable exports of ddi.cpp. It executes on host threads with Level
// Zero's documented semantics and breaks the run (breach()) when a caller breaks one of Level
// Zero's rules that a real driver would not report but would answer with corruption or a hang.
//
// All state is guarded by one mutex, state().mutex; the command lists' threads run copies,
// fills and kernels without it.
#ifndef POLYHAL_TESTS_BACKENDS_LEVEL_ZERO_DRIVER_DOUBLE_HPP_
#define POLYHAL_TESTS_BACKENDS_LEVEL_ZERO_DRIVER_DOUBLE_HPP_

#include <level_zero/ze_api.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace zedouble {

// Prints "Level Zero driver double: broken rule: <message>" and aborts the process.
[[noreturn]] void breach(const char* format, ...) __attribute__((format(printf, 1, 2)));

enum class Kind { Context, CommandList, EventPool, Event, Module, BuildLog, Kernel };

struct Allocation {
    // Shared: zeMemAllocShared's, which the host and its device both reach at one address.
    enum Type { Device, Host, Shared } type;
    char* base;  // what the caller was given (PROT_NONE for device memory)
    size_t size;
    char* alias;  // where the double reads and writes it
    ze_context_handle_t context;
    ze_device_handle_t device;  // null for host memory
    int pendingUses = 0;        // appended commands using it that have not finished
    int file = -1;              // device memory: its memory file, which IPC handles name
    bool imported = false;      // opened with zeMemOpenIpcHandle: closed, never freed
    int ipcHandles = 0;         // zeMemGetIpcHandle calls not yet put back (zeMemPutIpcHandle)
};

struct State {
    std::mutex mutex;
    std::condition_variable eventsChanged;        // an event was signalled or a wait finished
    std::map<const void*, Kind> handles;          // live handles
    std::map<uintptr_t, Allocation> allocations;  // by base address
    bool deviceLost = false;                      // a kernel failed: reported by every later wait
};
State& state();

// Records a handle as live / no longer live (callers hold the mutex).
void addHandle(const void* handle, Kind kind);
void removeHandle(const void* handle);
// Breaks the run unless `handle` is a live handle of `kind` (callers hold the mutex).
void expectLive(const void* handle, Kind kind, const char* call);

// The allocation holding [ptr, ptr + size), or null when ptr is in none. Breaks the run when
// ptr is inside an allocation that the range overruns. Callers hold the mutex.
const Allocation* findAllocation(const void* ptr, size_t size, const char* call);
// Where the double itself reads or writes [ptr, ptr + size) for a command of `context`: the
// alias of device memory, host memory as is, and any other pointer as system memory. Breaks the
// run for memory of another context. The allocation's base, if any, is added to `uses`.
// Callers hold the mutex.
char* hostAccessFor(ze_context_handle_t context, const void* ptr, size_t size, const char* call,
                    std::vector<uintptr_t>* uses);

}  // namespace zedouble

struct _ze_driver_handle_t {
    std::vector<ze_device_handle_t> devices;
};

struct _ze_device_handle_t {
    ze_driver_handle_t driver;
    uint32_t ordinal;
};

struct _ze_context_handle_t {
    ze_driver_handle_t driver;
};

struct _ze_event_pool_handle_t {
    ze_context_handle_t context;
    bool hostVisible;
    std::vector<ze_event_handle_t> events;  // by index; null where none was created
};

struct _ze_event_handle_t {
    ze_event_pool_handle_t pool;
    uint32_t index;
    bool signalled = false;
    int pendingSignals = 0;  // appended commands that will signal it
    int pendingWaits = 0;    // appended commands waiting for it
};

struct _ze_module_build_log_handle_t {
    std::string text;
};

struct _ze_module_handle_t {
    ze_context_handle_t context;
    ze_device_handle_t device;
    std::vector<uint8_t> image;  // the SPIR-V, recorded
    std::string buildFlags;
    struct Parameter {
        uint32_t size;  // bytes the argument takes
        bool pointer;   // a global (or constant) memory pointer
        bool local;     // a local (shared) memory pointer: set by size only
    };
    std::map<std::string, std::vector<Parameter>> kernels;  // the image's entry points
    int liveKernels = 0;
};

struct _ze_kernel_handle_t {
    ze_module_handle_t module;
    std::string name;
    const std::vector<_ze_module_handle_t::Parameter>* parameters;
    std::vector<std::vector<uint8_t>> values;  // by parameter; empty until set
    std::vector<bool> set;
    uint32_t groupSize[3] = {0, 0, 0};
    ze_kernel_indirect_access_flags_t indirectAccess = 0;
};

namespace zedouble {

// One command of an immediate command list: it starts when the earlier ones have finished and
// `waits` have signalled, then runs `work` and signals `signal`. A regular command list records
// commands, and each submission queues copies of them on an immediate list.
struct Command {
    explicit Command(const char* name) : call(name) {}
    const char* call;
    std::vector<ze_event_handle_t> waits;
    ze_event_handle_t signal = nullptr;
    std::function<void()> work;   // null for barriers
    std::vector<uintptr_t> uses;  // the allocations it reads or writes, by base address
    ze_command_list_handle_t runOf = nullptr;     // the regular list it is a submitted copy of
    ze_kernel_handle_t kernel = nullptr;          // the kernel a launch runs
    ze_command_list_handle_t queuedOn = nullptr;  // the immediate list it was queued on
};

// Where the commands of immediate lists run, one thread each: a ring of its own per immediate
// list, or, in the shared-ring mode (sharedRings()), one per engine, which every immediate list
// of that engine (command queue group and index) submits to, as compute-runtime does.
struct Ring {
    uint32_t ordinal = 0;
    bool computeCapable = false;
    std::deque<Command> queue;
    bool stopping = false;
    std::condition_variable wake;
    std::thread thread;
};

}  // namespace zedouble

struct _ze_command_list_handle_t {
    ze_context_handle_t context;
    ze_device_handle_t device;
    uint32_t ordinal;
    uint32_t index;
    bool computeCapable;
    bool immediate = true;
    // A regular list's: closed (zeCommandListClose), its commands, and those of its submissions
    // that have not finished.
    bool closed = false;
    std::vector<zedouble::Command> recorded;
    size_t submittedPending = 0;
    zedouble::Ring* ring = nullptr;      // an immediate list's; its own unless rings are shared
    size_t inFlight = 0;                 // queued or running
    std::atomic<bool> appending{false};  // a thread is inside an append call
};

namespace zedouble {

// Breaks the run unless `event` may be signalled now (callers hold the mutex).
void expectSignallable(ze_event_handle_t event, const char* call);

// Appends `command` to `list` after checking its events (takes the mutex): queues it on an
// immediate list, records it in an open regular one.
ze_result_t append(ze_command_list_handle_t list, Command command, uint32_t numWaitEvents,
                   ze_event_handle_t* waitEvents);

// Whether immediate lists of one engine share one ring (POLYHAL_ZE_DOUBLE_SHARED_RINGS set: its
// value "<compute engines>,<copy engines>", default "1,1", says how many engines each group has).
bool sharedRings();

// The device's description, as the double reports it.
uint64_t deviceMemoryBytes();
uint32_t queueCount(uint32_t ordinal);  // queues of command queue group `ordinal`
uint32_t maxGroupSize();
uint32_t maxSharedLocalMemory();

// Checks a launch of `kernel` on `list` and captures it as the work the list's thread runs;
// null when the kernel has no host build.
std::function<void()> captureLaunch(ze_command_list_handle_t list, ze_kernel_handle_t kernel,
                                    const ze_group_count_t& groups, std::vector<uintptr_t>* uses);

}  // namespace zedouble

#endif  // POLYHAL_TESTS_BACKENDS_LEVEL_ZERO_DRIVER_DOUBLE_HPP_
