// The libcuda.so.1 double: the CUDA driver API functions polyhal's cuda plugin calls, over the
// shared host engine (tests/backends/common), with the driver's documented semantics, and a
// breach of the driver's rules ends the run with the rule named (rules.hpp). This header holds
// the driver's objects, its state and the checks every function makes; the functions are in
// driver.cpp (initialisation, errors), context.cpp (devices, contexts), memory.cpp, stream.cpp
// (streams, events, host functions), module.cpp (modules, kernels) and graph.cpp (graphs, user
// objects).
//
// Rules enforced: a current context on the calling thread for every call that acts in one;
// streams, events, functions and memory used only in their own context (an event may be waited
// on from another context, as CUDA allows); handles alive (not destroyed, context not released);
// no driver call from a host function; kernel parameters matching the kernel's declared
// parameters; only interprocess events exported, and an imported event not used once its
// exporter destroyed it; graph nodes depending only on nodes of their own graph, each once;
// an executable launched only on a stream of its nodes' context; user objects not released
// more often than referenced. Results the driver returns instead (a memset of pageable host memory,
// a dynamic shared memory size above the function's limit, an interprocess event without
// CU_EVENT_DISABLE_TIMING, a handle opened in its own process, a memset node of pageable
// memory, a user object without CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) are returned as the driver
// returns them.
//
// POLYHAL_CUDA_DOUBLE_VERSION is the driver version the build imitates: functions newer than it
// are not exported, so the plugin's symbol resolution is checked against older drivers.
#ifndef POLYHAL_TESTS_BACKENDS_CUDA_DRIVER_HPP_
#define POLYHAL_TESTS_BACKENDS_CUDA_DRIVER_HPP_

#include <cuda.h>

#include <atomic>
#include <cstdint>
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

#ifndef POLYHAL_CUDA_DOUBLE_VERSION
#define POLYHAL_CUDA_DOUBLE_VERSION 13000
#endif

// The pre-12.8 name, which cuda.h maps to cuEventElapsedTime_v2.
#undef cuEventElapsedTime
extern "C" CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end);

namespace polyhal::doubles::cuda {

constexpr const char* kVendor = "CUDA";
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -5;
constexpr int kDefaultMaxDynamicShared = 48 * 1024;
constexpr int kOptInMaxShared = 227 * 1024;
constexpr int kMaxThreadsPerBlock = 1024;
// A Hopper GPU (compute capability 9.0).
constexpr int kComputeCapabilityMajor = 9;
// The largest pitch a copy node takes (CU_DEVICE_ATTRIBUTE_MAX_PITCH): GPUs report 2^31 - 1; the
// double reports 1 MiB, so that tests reach it with small copies.
constexpr int kMaxPitch = 1 << 20;

}  // namespace polyhal::doubles::cuda

struct CUctx_st;

struct CUstream_st {
    CUstream_st(CUctx_st* owner, std::shared_ptr<polyhal::doubles::HardwareQueue> queue)
        : context(owner), timeline(std::move(queue)) {}
    CUctx_st* context;
    polyhal::doubles::Stream timeline;
    std::atomic<bool> destroyed{false};
};

struct CUevent_st {
    CUctx_st* context;
    unsigned flags;
    std::mutex mutex;
    std::shared_ptr<polyhal::doubles::Marker> last;  // the point captured by the last record
    // An interprocess event keeps its records here instead, shared with other processes.
    std::shared_ptr<polyhal::doubles::IpcEvent> shared;
};

struct CUfunc_st {
    CUmod_st* module;
    std::string name;
    const polyhal::doubles::HostKernel*
        host;  // nullptr: named by the image, but the double has no host build
    // Static shared memory: POLYHAL_CUDA_DOUBLE_STATIC_SHARED bytes (0 without it), read when
    // the function is first looked up. Static and dynamic together stay within 48 KiB unless
    // the kernel opts in, so the default dynamic limit is 48 KiB less the static part.
    int staticShared = 0;
    std::atomic<int> maxDynamicShared{polyhal::doubles::cuda::kDefaultMaxDynamicShared};
};

struct CUmod_st {
    CUctx_st* context;
    std::string image;  // the recorded image
    std::map<std::string, std::unique_ptr<CUfunc_st>> functions;
};

struct CUgraph_st {
    polyhal::doubles::Graph graph;
};

struct CUgraphExec_st {
    std::shared_ptr<polyhal::doubles::GraphExecutable> executable;
};

struct CUctx_st {
    int device;
    std::atomic<CUresult> sticky{CUDA_SUCCESS};  // a kernel fault poisons the context
    std::mutex mutex;
    std::vector<std::shared_ptr<CUstream_st>> streams;  // destroyed ones too, until they drain
    // CUDA_DEVICE_MAX_CONNECTIONS (default 8) queues, which streams beyond that share. NVIDIA
    // does not document which streams share one; the double hands them out as ROCm does.
    polyhal::doubles::HardwareQueues queues{
        polyhal::doubles::hardwareQueueLimit("CUDA_DEVICE_MAX_CONNECTIONS", 8)};
    std::set<const CUctx_st*> peers;  // contexts whose memory this one's kernels may access
};

namespace polyhal::doubles::cuda {

struct Device {
    int retains = 0;
    std::unique_ptr<CUctx_st> primary;
};

// Handle kinds (HandleRegistry).
constexpr const char* kContext = "CUcontext";
constexpr const char* kStream = "CUstream";
constexpr const char* kEvent = "CUevent";
constexpr const char* kModule = "CUmodule";
constexpr const char* kFunction = "CUfunction";
constexpr const char* kGraph = "CUgraph";
constexpr const char* kGraphExec = "CUgraphExec";
constexpr const char* kUserObject = "CUuserObject";

// Driver-wide state (driver.cpp), never destroyed: streams may still run, and the plugin may
// still call in, while the process exits. g_mutex guards g_initialized and g_devices' retains.
extern std::mutex g_mutex;
extern bool g_initialized;
extern std::vector<Device>& g_devices;
extern AddressSpace& g_memory;
extern HandleRegistry& g_handles;
// cuGraphLaunch calls that succeeded (polyhalCudaDoubleGraphLaunches).
extern std::atomic<uint64_t> g_graphLaunches;

// Every entry: the driver is initialised and the caller is not a host function.
CUresult enter(const char* function);

// The calling thread's context stack; its top is the current context.
std::vector<CUctx_st*>& contextStack();
CUctx_st* currentContext();
// The calling thread's current context, which must exist and be alive.
CUctx_st* requireCurrent(const char* function);
// `owner` (the context of a handle or of memory) must be the calling thread's current context.
void requireOwnContext(const char* function, const CUctx_st* owner, const char* what);
CUstream_st* requireStream(const char* function, CUstream stream);
bool validDevice(CUdevice device);
// CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED: 1 unless POLYHAL_CUDA_DOUBLE_IPC_EVENTS=0 (read at each
// query), as on WSL or under MPS.
int ipcEventsSupported(CUdevice device);
// How many of the next cuCtxPushCurrent calls fail (polyhalCudaDoubleFailContextPushes).
extern std::atomic<int> g_failingPushes;
// Releases a primary context: its handles die, its streams drain, its memory goes.
void destroyContext(std::unique_ptr<CUctx_st> context);
// cuDevicePrimaryCtxReset: the context stays (its handle valid, still retained), everything in it
// goes, and a fault it kept is cleared.
void resetContext(CUctx_st* context);

// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the offending captures invalidated, when a
// potentially unsafe call may not be made now from the calling thread (capture.cpp).
CUresult checkCaptureInteraction();

// The checks cuLaunchKernel and cuGraphAddKernelNode share; `caller` names the rule's function.
CUresult prepareLaunch(const char* caller, CUfunction function, halDim3 grid, halDim3 block,
                       unsigned sharedBytes, void** params, void** extra,
                       std::shared_ptr<const KernelRun>* prepared);

// One end of a cuMemcpy2D or CUDA_MEMCPY3D copy: where its `rows` rows are, checked against the
// memory type the caller says they are in.
CUresult locateRows(const char* function, const char* end, CUmemorytype type, const void* host,
                    CUdeviceptr device, size_t x, size_t y, size_t pitch, size_t width, size_t rows,
                    Place* place);

template <class T>
T* requireLive(const char* function, T* handle, const char* kind) {
    if (handle == nullptr || !g_handles.isLive(handle, kind)) {
        breach(kVendor,
               "%s: %s %p is not alive (never created, destroyed, or its context was "
               "released)",
               function, kind, static_cast<const void*>(handle));
    }
    return handle;
}

inline void* toPointer(CUdeviceptr pointer) {
    return reinterpret_cast<void*>(static_cast<uintptr_t>(pointer));
}

}  // namespace polyhal::doubles::cuda

#define ENTER()                                                                             \
    do {                                                                                    \
        if (CUresult entered_ = ::polyhal::doubles::cuda::enter(__func__)) return entered_; \
    } while (0)

// ENTER() for a call that stream capture prohibits at times (capture.cpp).
#define ENTER_UNSAFE_DURING_CAPTURE()                                                  \
    do {                                                                               \
        ENTER();                                                                       \
        if (CUresult refused_ = ::polyhal::doubles::cuda::checkCaptureInteraction()) { \
            return refused_;                                                           \
        }                                                                              \
    } while (0)

#endif  // POLYHAL_TESTS_BACKENDS_CUDA_DRIVER_HPP_
