// The libamdhip64.so double: the HIP runtime functions polyhal's hip plugin calls, over the shared
// host engine (tests/backends/common), with HIP's documented semantics; a breach of HIP's rules
// ends the run with the rule named (rules.hpp). This header holds the runtime's objects, its
// state and the checks every function makes; the functions are in runtime.cpp (initialisation,
// errors), device.cpp, memory.cpp, stream.cpp (streams, callbacks, events), module.cpp and
// graph.cpp (graphs, user objects).
//
// Rules enforced: handles alive (not destroyed); a stream, an event and a kernel used together
// belong to one device, and the calls that act on "the current device" (allocations, stream,
// event and module creation) get the device the handle-less call means; no runtime call from a
// stream callback; kernel parameters matching those the kernel's code object declares; a copy's
// direction matching where its pointers lie; only interprocess events exported, and an imported
// event not used once its exporter destroyed it; graph nodes depending only on nodes of their
// own graph; an executable launched only on a stream of its nodes' device; user objects not
// released more often than referenced. A memset (or memset node) of pageable host memory, an
// interprocess event without hipEventDisableTiming and a handle opened in its own process are
// refused as the runtime refuses them.
#ifndef POLYHAL_TESTS_BACKENDS_HIP_RUNTIME_HPP_
#define POLYHAL_TESTS_BACKENDS_HIP_RUNTIME_HPP_

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#ifndef __HIP_DISABLE_CPP_FUNCTIONS__
#define __HIP_DISABLE_CPP_FUNCTIONS__
#endif
#include <hip/hip_runtime_api.h>

#include "hip/code_object.hpp"
#include "hip/user_objects.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "address_space.hpp"
#include "graph.hpp"
#include "handles.hpp"
#include "host_kernels.hpp"
#include "ipc_events.hpp"
#include "rules.hpp"
#include "timeline.hpp"

struct ihipStream_t : std::enable_shared_from_this<ihipStream_t> {
    ihipStream_t(int ordinal, std::shared_ptr<polyhal::doubles::HardwareQueue> queue)
        : device(ordinal), timeline(std::move(queue)) {}
    int device;
    polyhal::doubles::Stream timeline;
    std::atomic<bool> destroyed{false};
};

struct ihipEvent_t {
    int device;
    unsigned flags;
    std::mutex mutex;
    std::shared_ptr<polyhal::doubles::Marker> last;
    // An interprocess event keeps its records here instead, shared with other processes.
    std::shared_ptr<polyhal::doubles::IpcEvent> shared;
    // The stream of the last record: the runtime keeps a pointer to it, which its query and
    // synchronize read (clr's hipEventQuery reads the stream's capture status), also after the
    // stream was destroyed.
    std::shared_ptr<ihipStream_t> recordedOn;
};

struct ihipGraph {
    polyhal::doubles::Graph graph;
};

struct hipGraphExec {
    std::shared_ptr<polyhal::doubles::GraphExecutable> executable;
};

struct ihipModuleSymbol_t {
    ihipModule_t* module;
    std::string name;
    // The parameters its code object declares, run by the host build of its name; nullptr when
    // the double has no host build of that signature.
    const polyhal::doubles::HostKernel* host;
};

struct ihipModule_t {
    int device;
    polyhal::hip::KernelParameters kernels;  // as the code object's metadata declares them
    std::map<std::string, std::unique_ptr<ihipModuleSymbol_t>> functions;
};

namespace polyhal::doubles::hip {

constexpr const char* kVendor = "HIP";
constexpr const char* kStream = "hipStream_t";
constexpr const char* kEvent = "hipEvent_t";
constexpr const char* kModule = "hipModule_t";
constexpr const char* kFunction = "hipFunction_t";
constexpr const char* kGraph = "hipGraph_t";
constexpr const char* kGraphExec = "hipGraphExec_t";
constexpr const char* kUserObject = "hipUserObject_t";
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -1;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kMaxSharedMemory = 64 * 1024;
// The largest pitch a copy node takes (hipDeviceAttributeMaxPitch): GPUs report 2^31 - 1; the
// double reports 1 MiB, so that tests reach it with small copies.
constexpr int kMaxPitch = 1 << 20;

struct Device {
    std::mutex mutex;
    std::vector<std::shared_ptr<ihipStream_t>> streams;  // destroyed ones too, until they drain
    // GPU_MAX_HW_QUEUES (default 4, ROCm/clr rocclr/utils/flags.hpp:152) queues, which streams
    // beyond that share (ROCm keeps a pool per priority; the double one for all).
    polyhal::doubles::HardwareQueues queues{
        polyhal::doubles::hardwareQueueLimit("GPU_MAX_HW_QUEUES", 4)};
    std::set<int> peers;  // devices whose memory this one's kernels may access
};

// Runtime-wide state (runtime.cpp), never destroyed: streams may still run, and the plugin may
// still call in, while the process exits.
extern std::vector<std::unique_ptr<Device>>& g_devices;
extern AddressSpace& g_memory;
extern HandleRegistry& g_handles;
// hipGraphLaunch calls that succeeded (polyhalHipDoubleGraphLaunches).
extern std::atomic<uint64_t> g_graphLaunches;

// Every entry: not from a stream callback. HIP initialises itself on first use.
void enter(const char* function);
// The calling thread's current device: device 0 until the thread sets another.
int& currentDevice();
bool validDevice(int device);
void requireSameDevice(const char* function, int first, const char* firstWhat, int second,
                       const char* secondWhat);
// Waits for every stream of `ordinal`, destroyed ones still draining included.
void synchronizeDevice(int ordinal);

// The checks hipModuleLaunchKernel and hipGraphAddKernelNode share; `caller` names the rule's
// function.
hipError_t prepareLaunch(const char* caller, hipFunction_t function, halDim3 grid, halDim3 block,
                         unsigned sharedBytes, void** params, void** extra,
                         std::shared_ptr<const KernelRun>* prepared);
// Does a copy's direction match where its pointers lie?
bool directionMatches(hipMemcpyKind kind, const Place& to, const Place& from);

template <class T>
T* requireLive(const char* function, T* handle, const char* kind) {
    if (handle == nullptr || !g_handles.isLive(handle, kind)) {
        breach(kVendor, "%s: %s %p is not alive (never created, or destroyed)", function, kind,
               static_cast<const void*>(handle));
    }
    return handle;
}

}  // namespace polyhal::doubles::hip

#define ENTER() ::polyhal::doubles::hip::enter(__func__)

#endif  // POLYHAL_TESTS_BACKENDS_HIP_RUNTIME_HPP_
