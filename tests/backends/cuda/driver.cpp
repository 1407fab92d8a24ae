// Initialisation, error names, and the state and checks every function of the double shares.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "driver.hpp"

namespace polyhal::doubles::cuda {

std::mutex g_mutex;
bool g_initialized = false;
std::vector<Device>& g_devices = *new std::vector<Device>();
AddressSpace& g_memory = *new AddressSpace();
HandleRegistry& g_handles = *new HandleRegistry();
std::atomic<int> g_failingPushes{0};
std::atomic<uint64_t> g_graphLaunches{0};

namespace {

// Calls of each driver function since the start (polyhalCudaDoubleCalls), by the function's
// __func__, which is one array per function; guarded by g_mutex.
std::unordered_map<const char*, uint64_t>& g_calls =
    *new std::unordered_map<const char*, uint64_t>();

size_t environmentSize(const char* name, size_t fallback) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::strtoull(value, nullptr, 0) : fallback;
}

}  // namespace

int ipcEventsSupported(CUdevice /*device*/) {
    const char* value = std::getenv("POLYHAL_CUDA_DOUBLE_IPC_EVENTS");
    return value != nullptr && std::strcmp(value, "0") == 0 ? 0 : 1;
}

CUresult enter(const char* function) {
    if (onHostFunctionThread()) {
        breach(kVendor,
               "%s called from inside a host function (CUDA forbids any CUDA call "
               "there)",
               function);
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    ++g_calls[function];
    return g_initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

std::vector<CUctx_st*>& contextStack() {
    thread_local std::vector<CUctx_st*> stack;
    return stack;
}

CUctx_st* currentContext() {
    const auto& stack = contextStack();
    return stack.empty() ? nullptr : stack.back();
}

CUctx_st* requireCurrent(const char* function) {
    CUctx_st* context = currentContext();
    if (context == nullptr) breach(kVendor, "%s called with no current context", function);
    requireLive(function, context, kContext);
    return context;
}

void requireOwnContext(const char* function, const CUctx_st* owner, const char* what) {
    const CUctx_st* current = requireCurrent(function);
    if (owner != current) {
        breach(kVendor,
               "%s: %s belongs to the context of device %d, but the context of device %d "
               "is current",
               function, what, owner->device, current->device);
    }
}

CUstream_st* requireStream(const char* function, CUstream stream) {
    requireLive(function, stream, kStream);
    requireOwnContext(function, stream->context, "the stream");
    return stream;
}

bool validDevice(CUdevice device) {
    return device >= 0 && device < static_cast<int>(g_devices.size());
}

namespace {

// Forgets the handles of `context`'s objects (the context's own too when `andContext`), drains
// its streams and frees its memory.
void clearContext(CUctx_st* context, bool andContext) {
    const CUctx_st* dying = context;
    g_handles.removeIf([dying, andContext](const void* handle, const char* kind) {
        if (std::strcmp(kind, kContext) == 0) return andContext && handle == dying;
        if (std::strcmp(kind, kStream) == 0) {
            return static_cast<const CUstream_st*>(handle)->context == dying;
        }
        if (std::strcmp(kind, kEvent) == 0) {
            return static_cast<const CUevent_st*>(handle)->context == dying;
        }
        if (std::strcmp(kind, kModule) == 0) {
            return static_cast<const CUmod_st*>(handle)->context == dying;
        }
        if (std::strcmp(kind, kFunction) == 0) {
            return static_cast<const CUfunc_st*>(handle)->module->context == dying;
        }
        return false;  // graphs, executables and user objects belong to no context
    });
    // Streams drain first. Events and modules the application did not destroy stay allocated,
    // so a leak checker reports them.
    std::vector<std::shared_ptr<CUstream_st>> streams;
    {
        std::lock_guard<std::mutex> lock(context->mutex);
        streams.swap(context->streams);
    }
    streams.clear();
    g_memory.heap(context->device).releaseAll();
}

}  // namespace

void destroyContext(std::unique_ptr<CUctx_st> context) {
    clearContext(context.get(), true);
}

void resetContext(CUctx_st* context) {
    clearContext(context, false);
    std::lock_guard<std::mutex> lock(context->mutex);
    context->peers.clear();
    context->sticky.store(CUDA_SUCCESS);
}

}  // namespace polyhal::doubles::cuda

using namespace polyhal::doubles;
using namespace polyhal::doubles::cuda;

extern "C" {

CUresult CUDAAPI cuInit(unsigned int flags) {
    if (onHostFunctionThread()) {
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
    default: *name = nullptr; return CUDA_ERROR_INVALID_VALUE;
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

// ---- Inspection, for tests (not part of the CUDA API) ----

// Makes the next `count` cuCtxPushCurrent calls fail with CUDA_ERROR_INVALID_CONTEXT, as when
// a context cannot be made current.
void polyhalCudaDoubleFailContextPushes(int count) {
    g_failingPushes.store(count);
}

// How many handles of `kind` ("CUstream", "CUevent", "CUmodule" ...) are alive.
size_t polyhalCudaDoubleLiveHandles(const char* kind) {
    return g_handles.count(kind);
}

// How many cuGraphLaunch calls succeeded: a graph the plugin runs natively is launched here.
uint64_t polyhalCudaDoubleGraphLaunches() {
    return g_graphLaunches.load();
}

// How often the driver function `name` ("cuFuncGetParamInfo", "cuDevicePrimaryCtxRetain" ...) was
// called since the process started, successfully or not.
uint64_t polyhalCudaDoubleCalls(const char* name) {
    std::lock_guard<std::mutex> lock(g_mutex);
    uint64_t calls = 0;
    for (const auto& [function, count] : g_calls) {
        if (std::strcmp(function, name) == 0) calls += count;
    }
    return calls;
}

// How often device `ordinal`'s primary context is retained (0: it does not exist).
int polyhalCudaDoublePrimaryContextRetains(int ordinal) {
    std::lock_guard<std::mutex> lock(g_mutex);
    return ordinal >= 0 && ordinal < static_cast<int>(g_devices.size())
               ? g_devices[static_cast<size_t>(ordinal)].retains
               : -1;
}

}  // extern "C"
