// The libcuda.so.1 double: the CUDA driver API functions polyhal's cuda plugin calls, over the
// shared host engine (tests/drivers/common), with the driver's documented semantics, and a
// breach of the driver's rules ends the run with the rule named (rules.hpp).
//
// Rules enforced: a current context on the calling thread for every call that acts in one;
// streams, events, functions and memory used only in their own context (an event may be waited
// on from another context, as CUDA allows); handles alive (not destroyed, context not released);
// no driver call from a host function; kernel parameters matching the kernel's declared
// parameters. Results the driver returns instead (a memset of pageable host memory, a dynamic
// shared memory size above the function's limit) are returned as the driver returns them.
//
// POLYHAL_CUDA_DOUBLE_VERSION is the driver version the build imitates: functions newer than it
// are not exported, so the plugin's symbol resolution is checked against older drivers.
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "address_space.hpp"
#include "handles.hpp"
#include "host_kernels.hpp"
#include "rules.hpp"
#include "timeline.hpp"

#ifndef POLYHAL_CUDA_DOUBLE_VERSION
#define POLYHAL_CUDA_DOUBLE_VERSION 13000
#endif

// The pre-12.8 name, which cuda.h maps to cuEventElapsedTime_v2.
#undef cuEventElapsedTime
extern "C" CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end);

using polyhal::doubles::breach;
using polyhal::doubles::DeviceHeap;
using polyhal::doubles::HostKernel;
using polyhal::doubles::Marker;
using polyhal::doubles::Place;

namespace {

constexpr const char* kVendor = "CUDA";
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -5;
constexpr int kDefaultMaxDynamicShared = 48 * 1024;
constexpr int kOptInMaxShared = 227 * 1024;
constexpr int kMaxThreadsPerBlock = 1024;

}  // namespace

struct CUctx_st;

struct CUstream_st {
    CUctx_st* context;
    polyhal::doubles::Stream timeline;
    std::atomic<bool> destroyed{false};
};

struct CUevent_st {
    CUctx_st* context;
    unsigned flags;
    std::mutex mutex;
    std::shared_ptr<Marker> last;  // the point captured by the last record
};

struct CUfunc_st {
    CUmod_st* module;
    std::string name;
    const HostKernel* host;  // nullptr: named by the image, but the double has no host build
    std::atomic<int> maxDynamicShared{kDefaultMaxDynamicShared};
};

struct CUmod_st {
    CUctx_st* context;
    std::string image;  // the recorded image
    std::map<std::string, std::unique_ptr<CUfunc_st>> functions;
};

struct CUctx_st {
    int device;
    std::atomic<CUresult> sticky{CUDA_SUCCESS};  // a kernel fault poisons the context
    std::mutex mutex;
    std::vector<std::shared_ptr<CUstream_st>> streams;  // destroyed ones too, until they drain
};

namespace {

struct Device {
    int retains = 0;
    std::unique_ptr<CUctx_st> primary;
};

constexpr const char* kContext = "CUcontext";
constexpr const char* kStream = "CUstream";
constexpr const char* kEvent = "CUevent";
constexpr const char* kModule = "CUmodule";
constexpr const char* kFunction = "CUfunction";

// Driver-wide state, never destroyed: streams may still run, and the plugin may still call in,
// while the process exits. g_mutex guards g_initialized and g_devices.
std::mutex g_mutex;
bool g_initialized = false;
auto& g_devices = *new std::vector<Device>();
auto& g_memory = *new polyhal::doubles::AddressSpace();
auto& g_handles = *new polyhal::doubles::HandleRegistry();

thread_local std::vector<CUctx_st*> t_contexts;  // the thread's context stack

size_t environmentSize(const char* name, size_t fallback) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::strtoull(value, nullptr, 0) : fallback;
}

template <class T>
T* requireLive(const char* function, T* handle, const char* kind) {
    if (handle == nullptr || !g_handles.isLive(handle, kind)) {
        breach(kVendor, "%s: %s %p is not alive (never created, destroyed, or its context was "
               "released)", function, kind, static_cast<const void*>(handle));
    }
    return handle;
}

// Every entry: the driver is initialised and the caller is not a host function.
CUresult enter(const char* function) {
    if (polyhal::doubles::onHostFunctionThread()) {
        breach(kVendor, "%s called from inside a host function (CUDA forbids any CUDA call "
               "there)", function);
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

#define ENTER()                                          \
    do {                                                 \
        if (CUresult entered_ = enter(__func__)) return entered_; \
    } while (0)

CUctx_st* currentContext() { return t_contexts.empty() ? nullptr : t_contexts.back(); }

// The calling thread's current context, which must exist and be alive.
CUctx_st* requireCurrent(const char* function) {
    CUctx_st* context = currentContext();
    if (context == nullptr) breach(kVendor, "%s called with no current context", function);
    requireLive(function, context, kContext);
    return context;
}

// `owner` (the context of a handle or of memory) must be the calling thread's current context.
void requireOwnContext(const char* function, const CUctx_st* owner, const char* what) {
    const CUctx_st* current = requireCurrent(function);
    if (owner != current) {
        breach(kVendor, "%s: %s belongs to the context of device %d, but the context of device %d "
               "is current", function, what, owner->device, current->device);
    }
}

CUstream_st* requireStream(const char* function, CUstream stream) {
    requireLive(function, stream, kStream);
    requireOwnContext(function, stream->context, "the stream");
    return stream;
}

void* toPointer(CUdeviceptr pointer) { return reinterpret_cast<void*>(static_cast<uintptr_t>(pointer)); }

// Releases a primary context: its handles die, its streams drain, its memory goes.
void destroyContext(std::unique_ptr<CUctx_st> context) {
    const CUctx_st* dying = context.get();
    g_handles.removeIf([dying](const void* handle, const char* kind) {
        if (kind == kContext) return handle == dying;
        if (kind == kStream) return static_cast<const CUstream_st*>(handle)->context == dying;
        if (kind == kEvent) return static_cast<const CUevent_st*>(handle)->context == dying;
        if (kind == kModule) return static_cast<const CUmod_st*>(handle)->context == dying;
        return static_cast<const CUfunc_st*>(handle)->module->context == dying;
    });
    // Streams drain first. Events and modules the application did not destroy stay allocated,
    // so a leak checker reports them.
    context->streams.clear();
    g_memory.heap(context->device).releaseAll();
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuInit(unsigned int flags) {
    if (polyhal::doubles::onHostFunctionThread()) {
        breach(kVendor, "cuInit called from inside a host function");
    }
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_initialized) {
        const size_t count = environmentSize("POLYHAL_CUDA_DOUBLE_DEVICES", 1);
        const size_t memory = environmentSize("POLYHAL_CUDA_DOUBLE_MEMORY", size_t{1} << 30);
        g_memory.addDevices(count, memory);
        g_devices.resize(count);
        g_initialized = true;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int* version) {
    if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *version = POLYHAL_CUDA_DOUBLE_VERSION;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** name) {
    switch (error) {
#define POLYHAL_NAME(value) \
    case value: *name = #value; return CUDA_SUCCESS;
        POLYHAL_NAME(CUDA_SUCCESS)
        POLYHAL_NAME(CUDA_ERROR_INVALID_VALUE)
        POLYHAL_NAME(CUDA_ERROR_OUT_OF_MEMORY)
        POLYHAL_NAME(CUDA_ERROR_NOT_INITIALIZED)
        POLYHAL_NAME(CUDA_ERROR_INVALID_DEVICE)
        POLYHAL_NAME(CUDA_ERROR_INVALID_IMAGE)
        POLYHAL_NAME(CUDA_ERROR_INVALID_CONTEXT)
        POLYHAL_NAME(CUDA_ERROR_INVALID_HANDLE)
        POLYHAL_NAME(CUDA_ERROR_NOT_FOUND)
        POLYHAL_NAME(CUDA_ERROR_NOT_READY)
        POLYHAL_NAME(CUDA_ERROR_LAUNCH_FAILED)
        POLYHAL_NAME(CUDA_ERROR_NOT_SUPPORTED)
#undef POLYHAL_NAME
        default:
            *name = nullptr;
            return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char** text) {
    switch (error) {
        case CUDA_SUCCESS: *text = "no error"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_VALUE: *text = "invalid argument"; return CUDA_SUCCESS;
        case CUDA_ERROR_OUT_OF_MEMORY: *text = "out of memory"; return CUDA_SUCCESS;
        case CUDA_ERROR_NOT_INITIALIZED: *text = "initialization error"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_DEVICE: *text = "invalid device ordinal"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_IMAGE: *text = "device kernel image is invalid"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_CONTEXT: *text = "invalid device context"; return CUDA_SUCCESS;
        case CUDA_ERROR_INVALID_HANDLE: *text = "invalid resource handle"; return CUDA_SUCCESS;
        case CUDA_ERROR_NOT_FOUND: *text = "named symbol not found"; return CUDA_SUCCESS;
        case CUDA_ERROR_NOT_READY: *text = "device not ready"; return CUDA_SUCCESS;
        case CUDA_ERROR_LAUNCH_FAILED: *text = "unspecified launch failure"; return CUDA_SUCCESS;
        case CUDA_ERROR_NOT_SUPPORTED: *text = "operation not supported"; return CUDA_SUCCESS;
        default: *text = nullptr; return CUDA_ERROR_INVALID_VALUE;
    }
}

// ---- Devices ----

CUresult CUDAAPI cuDeviceGetCount(int* count) {
    ENTER();
    *count = static_cast<int>(g_devices.size());
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
    ENTER();
    if (ordinal < 0 || ordinal >= static_cast<int>(g_devices.size())) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

static bool validDevice(CUdevice device) {
    return device >= 0 && device < static_cast<int>(g_devices.size());
}

CUresult CUDAAPI cuDeviceGetName(char* name, int length, CUdevice device) {
    ENTER();
    if (!validDevice(device)) return CUDA_ERROR_INVALID_DEVICE;
    if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
    std::snprintf(name, static_cast<size_t>(length), "polyhal CUDA driver double %d", device);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice device) {
    ENTER();
    if (!validDevice(device)) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = g_memory.heap(device).capacity();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
    ENTER();
    if (!validDevice(device)) return CUDA_ERROR_INVALID_DEVICE;
    switch (attribute) {
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 4; break;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = kMaxThreadsPerBlock; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = kDefaultMaxDynamicShared; break;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = kOptInMaxShared; break;
        case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *value = 1; break;
        case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *value = 1; break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceCanAccessPeer(int* canAccess, CUdevice device, CUdevice peer) {
    ENTER();
    if (!validDevice(device) || !validDevice(peer)) return CUDA_ERROR_INVALID_DEVICE;
    *canAccess = device != peer;
    return CUDA_SUCCESS;
}

// ---- Contexts ----

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
    ENTER();
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!validDevice(device)) return CUDA_ERROR_INVALID_DEVICE;
    Device& state = g_devices[static_cast<size_t>(device)];
    if (state.retains++ == 0) {
        state.primary = std::make_unique<CUctx_st>();
        state.primary->device = device;
        g_handles.add(state.primary.get(), kContext);
    }
    *context = state.primary.get();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice device) {
    ENTER();
    std::unique_ptr<CUctx_st> released;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (!validDevice(device)) return CUDA_ERROR_INVALID_DEVICE;
        Device& state = g_devices[static_cast<size_t>(device)];
        if (state.retains == 0) {
            breach(kVendor, "cuDevicePrimaryCtxRelease: device %d's primary context is not "
                   "retained", device);
        }
        if (--state.retains == 0) released = std::move(state.primary);
    }
    if (released) destroyContext(std::move(released));
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice device, unsigned* flags, int* active) {
    ENTER();
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!validDevice(device)) return CUDA_ERROR_INVALID_DEVICE;
    *flags = 0;
    *active = g_devices[static_cast<size_t>(device)].retains > 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* context) {
    ENTER();
    *context = currentContext();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext context) {
    ENTER();
    if (context != nullptr) requireLive(__func__, context, kContext);
    if (context == nullptr) {
        if (!t_contexts.empty()) t_contexts.pop_back();
    } else if (t_contexts.empty()) {
        t_contexts.push_back(context);
    } else {
        t_contexts.back() = context;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext context) {
    ENTER();
    requireLive(__func__, context, kContext);
    t_contexts.push_back(context);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext* context) {
    ENTER();
    if (t_contexts.empty()) return CUDA_ERROR_INVALID_CONTEXT;
    if (context != nullptr) *context = t_contexts.back();
    t_contexts.pop_back();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
    ENTER();
    *device = requireCurrent(__func__)->device;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetStreamPriorityRange(int* least, int* greatest) {
    ENTER();
    requireCurrent(__func__);
    if (least != nullptr) *least = kLeastPriority;
    if (greatest != nullptr) *greatest = kGreatestPriority;
    return CUDA_SUCCESS;
}

// Waits for every stream of the current context, destroyed ones still draining included.
CUresult CUDAAPI cuCtxSynchronize() {
    ENTER();
    CUctx_st* context = requireCurrent(__func__);
    std::vector<std::shared_ptr<CUstream_st>> streams;
    {
        std::lock_guard<std::mutex> lock(context->mutex);
        streams = context->streams;
    }
    for (const auto& stream : streams) stream->timeline.synchronize();
    return context->sticky.load();
}

// ---- Memory ----

CUresult CUDAAPI cuMemGetInfo(size_t* free, size_t* total) {
    ENTER();
    const DeviceHeap& heap = g_memory.heap(requireCurrent(__func__)->device);
    *free = heap.available();
    *total = heap.capacity();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr* pointer, size_t size) {
    ENTER();
    CUctx_st* context = requireCurrent(__func__);
    if (size == 0) return CUDA_ERROR_INVALID_VALUE;
    void* allocated = g_memory.heap(context->device).allocate(size);
    if (allocated == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    *pointer = reinterpret_cast<uintptr_t>(allocated);
    return CUDA_SUCCESS;
}

// The memory must belong to the current context's device.
static CUresult releaseDeviceMemory(const char* function, CUctx_st* context, CUdeviceptr pointer) {
    const int owner = g_memory.deviceOf(toPointer(pointer));
    if (owner < 0) return CUDA_ERROR_INVALID_VALUE;
    if (owner != context->device) {
        breach(kVendor, "%s: %p is memory of another device than the current context's (device "
               "%d)", function, toPointer(pointer), context->device);
    }
    return g_memory.heap(owner).release(toPointer(pointer)) ? CUDA_SUCCESS
                                                             : CUDA_ERROR_INVALID_VALUE;
}

// cuMemFree synchronises the device: it returns once every stream of the context is idle.
CUresult CUDAAPI cuMemFree(CUdeviceptr pointer) {
    ENTER();
    CUctx_st* context = requireCurrent(__func__);
    if (CUresult synchronized = cuCtxSynchronize()) return synchronized;
    return releaseDeviceMemory(__func__, context, pointer);
}

#if POLYHAL_CUDA_DOUBLE_VERSION >= 11020
// Stream-ordered: the memory is released when the stream reaches the free; no other stream waits.
CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr pointer, CUstream streamHandle) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, streamHandle);
    Place place{};
    if (!g_memory.locate(toPointer(pointer), 1, &place) || place.kind != Place::kDevice) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (place.device != stream->context->device) {
        breach(kVendor, "cuMemFreeAsync: %p is memory of device %d, the stream is of device %d",
               toPointer(pointer), place.device, stream->context->device);
    }
    DeviceHeap* heap = &g_memory.heap(place.device);
    stream->timeline.submit([heap, pointer] { heap->release(toPointer(pointer)); });
    return CUDA_SUCCESS;
}
#endif

CUresult CUDAAPI cuMemHostAlloc(void** pointer, size_t size, unsigned int flags) {
    ENTER();
    requireCurrent(__func__);
    if (size == 0 || (flags & ~(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
                                CU_MEMHOSTALLOC_WRITECOMBINED)) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    void* allocated = g_memory.allocatePinned(size);
    if (allocated == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    *pointer = allocated;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFreeHost(void* pointer) {
    ENTER();
    requireCurrent(__func__);
    return g_memory.freePinned(pointer) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// Copies follow the driver's documented host synchronisation (submitCopy).
static CUresult copyAsync(CUstream_st* stream, void* dst, const void* src, size_t count) {
    Place to{};
    Place from{};
    if (!g_memory.locate(dst, count, &to) || !g_memory.locate(src, count, &from)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (CUresult sticky = stream->context->sticky.load()) return sticky;
    polyhal::doubles::submitCopy(stream->timeline, to, from, count);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t count, CUstream stream) {
    ENTER();
    return copyAsync(requireStream(__func__, stream), toPointer(dst), toPointer(src),
                     count);
}

CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dstContext, CUdeviceptr src,
                                   CUcontext srcContext, size_t count, CUstream streamHandle) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, streamHandle);
    requireLive(__func__, dstContext, kContext);
    requireLive(__func__, srcContext, kContext);
    Place to{};
    Place from{};
    if (!g_memory.locate(toPointer(dst), count, &to) ||
        !g_memory.locate(toPointer(src), count, &from)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (to.kind != Place::kDevice || to.device != dstContext->device) {
        breach(kVendor, "cuMemcpyPeerAsync: the destination is not memory of dstContext's device");
    }
    if (from.kind != Place::kDevice || from.device != srcContext->device) {
        breach(kVendor, "cuMemcpyPeerAsync: the source is not memory of srcContext's device");
    }
    polyhal::doubles::submitCopy(stream->timeline, to, from, count);
    return CUDA_SUCCESS;
}

// Device memory, or page-locked host memory (mapped for the device under unified addressing);
// pageable host memory is refused as the driver refuses it.
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count,
                                 CUstream streamHandle) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, streamHandle);
    Place to{};
    if (!g_memory.locate(toPointer(dst), count, &to) || to.kind == Place::kPageable) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (CUresult sticky = stream->context->sticky.load()) return sticky;
    polyhal::doubles::submitFill(stream->timeline, to, value, count);
    return CUDA_SUCCESS;
}

// ---- Streams ----

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* handle, unsigned int flags, int priority) {
    ENTER();
    CUctx_st* context = requireCurrent(__func__);
    if (flags != CU_STREAM_DEFAULT && flags != CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
    // Priorities order nothing here: every stream has a thread of its own.
    (void)priority;
    auto stream = std::make_shared<CUstream_st>();
    stream->context = context;
    *handle = stream.get();
    {
        std::lock_guard<std::mutex> lock(context->mutex);
        // Destroyed streams that have drained go now.
        auto& streams = context->streams;
        streams.erase(std::remove_if(streams.begin(), streams.end(),
                                     [](const auto& old) {
                                         return old->destroyed && old->timeline.idle();
                                     }),
                      streams.end());
        streams.push_back(std::move(stream));
    }
    g_handles.add(*handle, kStream);
    return CUDA_SUCCESS;
}

// Returns at once; the stream's work still runs (the context keeps the stream until released).
CUresult CUDAAPI cuStreamDestroy(CUstream stream) {
    ENTER();
    requireStream(__func__, stream)->destroyed = true;
    g_handles.remove(stream);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream handle) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, handle);
    stream->timeline.synchronize();
    return stream->context->sticky.load();
}

CUresult CUDAAPI cuStreamQuery(CUstream handle) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, handle);
    if (CUresult sticky = stream->context->sticky.load()) return sticky;
    return stream->timeline.idle() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

// The event may belong to another context: CUDA allows cross-device waits.
CUresult CUDAAPI cuStreamWaitEvent(CUstream handle, CUevent event, unsigned int flags) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, handle);
    requireLive(__func__, event, kEvent);
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::shared_ptr<Marker> last;
    {
        std::lock_guard<std::mutex> lock(event->mutex);
        last = event->last;
    }
    if (last) stream->timeline.waitFor(std::move(last));
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream handle, CUhostFn fn, void* userData) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, handle);
    if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
    stream->timeline.submitHostFunction(fn, userData);
    return CUDA_SUCCESS;
}

// ---- Events ----

CUresult CUDAAPI cuEventCreate(CUevent* handle, unsigned int flags) {
    ENTER();
    CUctx_st* context = requireCurrent(__func__);
    if ((flags & ~(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto* event = new CUevent_st{context, flags, {}, nullptr};
    g_handles.add(event, kEvent);
    *handle = event;
    return CUDA_SUCCESS;
}

// Waits already enqueued on the event keep their point in the stream.
CUresult CUDAAPI cuEventDestroy(CUevent event) {
    ENTER();
    requireLive(__func__, event, kEvent);
    g_handles.remove(event);
    delete event;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream handle) {
    ENTER();
    CUstream_st* stream = requireStream(__func__, handle);
    requireLive(__func__, event, kEvent);
    requireOwnContext(__func__, event->context, "the event");
    std::shared_ptr<Marker> marker = stream->timeline.mark();
    std::lock_guard<std::mutex> lock(event->mutex);
    event->last = std::move(marker);
    return CUDA_SUCCESS;
}

static std::shared_ptr<Marker> lastRecord(CUevent event) {
    std::lock_guard<std::mutex> lock(event->mutex);
    return event->last;
}

CUresult CUDAAPI cuEventQuery(CUevent event) {
    ENTER();
    requireLive(__func__, event, kEvent);
    const std::shared_ptr<Marker> last = lastRecord(event);
    if (last && !last->done()) return CUDA_ERROR_NOT_READY;
    return event->context->sticky.load();
}

CUresult CUDAAPI cuEventSynchronize(CUevent event) {
    ENTER();
    requireLive(__func__, event, kEvent);
    if (const std::shared_ptr<Marker> last = lastRecord(event)) last->wait();
    return event->context->sticky.load();
}

static CUresult elapsedTime(const char* function, float* ms, CUevent start, CUevent end) {
    if (CUresult entered = enter(function)) return entered;
    requireLive(function, start, kEvent);
    requireLive(function, end, kEvent);
    if (ms == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING) != 0) return CUDA_ERROR_INVALID_HANDLE;
    const std::shared_ptr<Marker> first = lastRecord(start);
    const std::shared_ptr<Marker> second = lastRecord(end);
    if (!first || !second) return CUDA_ERROR_INVALID_HANDLE;
    if (!first->done() || !second->done()) return CUDA_ERROR_NOT_READY;
    *ms = std::chrono::duration<float, std::milli>(second->time() - first->time()).count();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
    return elapsedTime(__func__, ms, start, end);
}

#if POLYHAL_CUDA_DOUBLE_VERSION >= 12080
CUresult CUDAAPI cuEventElapsedTime_v2(float* ms, CUevent start, CUevent end) {
    return elapsedTime(__func__, ms, start, end);
}
#endif

// ---- Modules and kernels ----

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* handle, const void* image, unsigned int numOptions,
                                    CUjit_option* options, void** values) {
    ENTER();
    CUctx_st* context = requireCurrent(__func__);
    if (image == nullptr) return CUDA_ERROR_INVALID_VALUE;
    char* log = nullptr;
    size_t logSize = 0;
    for (unsigned i = 0; i < numOptions; ++i) {
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER) log = static_cast<char*>(values[i]);
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
            logSize = static_cast<size_t>(reinterpret_cast<uintptr_t>(values[i]));
        }
    }
    const auto* bytes = static_cast<const unsigned char*>(image);
    std::string recorded;
    if (std::memcmp(bytes, "\x50\xed\x55\xba", 4) == 0) {  // fatbin: header size + payload size
        uint16_t headerSize = 0;
        uint64_t payloadSize = 0;
        std::memcpy(&headerSize, bytes + 6, sizeof headerSize);
        std::memcpy(&payloadSize, bytes + 8, sizeof payloadSize);
        recorded.assign(reinterpret_cast<const char*>(bytes), headerSize + payloadSize);
    } else if (std::memcmp(bytes, "\x7f" "ELF", 4) == 0) {  // cubin: up to its section headers
        uint64_t sectionHeaders = 0;
        uint16_t entrySize = 0;
        uint16_t entries = 0;
        std::memcpy(&sectionHeaders, bytes + 0x28, sizeof sectionHeaders);
        std::memcpy(&entrySize, bytes + 0x3a, sizeof entrySize);
        std::memcpy(&entries, bytes + 0x3c, sizeof entries);
        recorded.assign(reinterpret_cast<const char*>(bytes), sectionHeaders + entrySize * entries);
    } else {
        recorded = static_cast<const char*>(image);
        if (recorded.find(".version") == std::string::npos ||
            recorded.find(".target") == std::string::npos) {
            if (log != nullptr && logSize > 0) {
                std::snprintf(log, logSize, "driver double: the image is not PTX, a cubin or a "
                              "fatbin");
            }
            return CUDA_ERROR_INVALID_IMAGE;
        }
    }
    auto* module = new CUmod_st{context, std::move(recorded), {}};
    g_handles.add(module, kModule);
    *handle = module;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) {
    ENTER();
    requireLive(__func__, module, kModule);
    for (auto& [name, function] : module->functions) g_handles.remove(function.get());
    g_handles.remove(module);
    delete module;
    return CUDA_SUCCESS;
}

// Does the recorded image define kernel `name`? PTX names it after ".entry"; a binary image
// holds it as a NUL-terminated symbol name.
static bool imageDefines(const std::string& image, const char* name) {
    const std::string entry = std::string(".entry ") + name;
    for (size_t at = image.find(entry); at != std::string::npos; at = image.find(entry, at + 1)) {
        const char next = at + entry.size() < image.size() ? image[at + entry.size()] : '\0';
        if (next == '(' || next == ' ' || next == '\n' || next == '\r') return true;
    }
    const bool isPtx = image.find(".version") != std::string::npos;
    return !isPtx && image.find(std::string(name) + '\0') != std::string::npos;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* handle, CUmodule module, const char* name) {
    ENTER();
    requireLive(__func__, module, kModule);
    requireOwnContext(__func__, module->context, "the module");
    if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!imageDefines(module->image, name)) return CUDA_ERROR_NOT_FOUND;
    auto& function = module->functions[name];
    if (!function) {
        function = std::make_unique<CUfunc_st>();
        function->module = module;
        function->name = name;
        function->host = polyhal::doubles::findHostKernel(name);
        g_handles.add(function.get(), kFunction);
    }
    *handle = function.get();
    return CUDA_SUCCESS;
}

#if POLYHAL_CUDA_DOUBLE_VERSION >= 12040
CUresult CUDAAPI cuFuncGetParamInfo(CUfunction function, size_t index, size_t* offset,
                                    size_t* size) {
    ENTER();
    requireLive(__func__, function, kFunction);
    if (function->host == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
    if (index >= function->host->parameters.size()) return CUDA_ERROR_INVALID_VALUE;
    if (offset != nullptr) *offset = function->host->offset(index);
    if (size != nullptr) *size = function->host->parameters[index].size;
    return CUDA_SUCCESS;
}
#endif

CUresult CUDAAPI cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction function) {
    ENTER();
    requireLive(__func__, function, kFunction);
    requireOwnContext(__func__, function->module->context, "the function");
    switch (attribute) {
        case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = function->maxDynamicShared; break;
        case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = 0; break;
        default: return CUDA_ERROR_NOT_SUPPORTED;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value) {
    ENTER();
    requireLive(__func__, function, kFunction);
    requireOwnContext(__func__, function->module->context, "the function");
    if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_ERROR_NOT_SUPPORTED;
    if (value < 0 || value > kOptInMaxShared) return CUDA_ERROR_INVALID_VALUE;
    function->maxDynamicShared = value;
    return CUDA_SUCCESS;
}

// Kernel arguments are read at their declared sizes from kernelParams[0..declared count), and
// copied at the call. A pointer parameter must hold memory of the launch's device (or
// page-locked host memory, or null).
CUresult CUDAAPI cuLaunchKernel(CUfunction function, unsigned gridX, unsigned gridY,
                                unsigned gridZ, unsigned blockX, unsigned blockY, unsigned blockZ,
                                unsigned sharedBytes, CUstream streamHandle, void** params,
                                void** extra) {
    ENTER();
    requireLive(__func__, function, kFunction);
    CUstream_st* stream = requireStream(__func__, streamHandle);
    requireOwnContext(__func__, function->module->context, "the function");
    if (CUresult sticky = stream->context->sticky.load()) return sticky;
    if (extra != nullptr) return CUDA_ERROR_NOT_SUPPORTED;
    if (gridX == 0 || gridY == 0 || gridZ == 0 || blockX == 0 || blockY == 0 || blockZ == 0 ||
        uint64_t{blockX} * blockY * blockZ > kMaxThreadsPerBlock) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (sharedBytes > static_cast<unsigned>(function->maxDynamicShared)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    const HostKernel* kernel = function->host;
    if (kernel == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
    std::vector<std::vector<unsigned char>> arguments;
    const std::string problem = polyhal::doubles::packArguments(
        *kernel, params, g_memory, stream->context->device, &arguments);
    if (!problem.empty()) breach(kVendor, "cuLaunchKernel: %s", problem.c_str());
    CUctx_st* context = stream->context;
    const halDim3 grid{gridX, gridY, gridZ};
    const halDim3 block{blockX, blockY, blockZ};
    stream->timeline.submit([=, arguments = std::move(arguments)] {
        if (polyhal::doubles::runHostKernel(*kernel, grid, block, sharedBytes, arguments) != 0) {
            context->sticky.store(CUDA_ERROR_LAUNCH_FAILED);
        }
    });
    return CUDA_SUCCESS;
}

// ---- Inspection, for tests (not part of the CUDA API) ----

// How often device `ordinal`'s primary context is retained (0: it does not exist).
int polyhalCudaDoublePrimaryContextRetains(int ordinal) {
    std::lock_guard<std::mutex> lock(g_mutex);
    return ordinal >= 0 && ordinal < static_cast<int>(g_devices.size())
               ? g_devices[static_cast<size_t>(ordinal)].retains
               : -1;
}

}  // extern "C"
