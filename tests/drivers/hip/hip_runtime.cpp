// The libamdhip64.so double: the HIP runtime functions polyhal's hip plugin calls, over the shared
// host engine (tests/drivers/common), with HIP's documented semantics; a breach of HIP's rules
// ends the run with the rule named (rules.hpp).
//
// Rules enforced: handles alive (not destroyed); a stream, an event and a kernel used together
// belong to one device, and the calls that act on "the current device" (allocations, stream,
// event and module creation) get the device the handle-less call means; no runtime call from a
// stream callback; kernel parameters matching the kernel's declared parameters; a copy's
// direction matching where its pointers lie. A memset of pageable host memory is refused as the
// runtime refuses it.
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#ifndef __HIP_DISABLE_CPP_FUNCTIONS__
#define __HIP_DISABLE_CPP_FUNCTIONS__
#endif
#include <hip/hip_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "address_space.hpp"
#include "handles.hpp"
#include "host_kernels.hpp"
#include "rules.hpp"
#include "timeline.hpp"

using polyhal::doubles::breach;
using polyhal::doubles::HostKernel;
using polyhal::doubles::Marker;
using polyhal::doubles::Place;

struct ihipStream_t {
    int device;
    polyhal::doubles::Stream timeline;
    std::atomic<bool> destroyed{false};
};

struct ihipEvent_t {
    int device;
    unsigned flags;
    std::mutex mutex;
    std::shared_ptr<Marker> last;
};

struct ihipModuleSymbol_t {
    ihipModule_t* module;
    std::string name;
    const HostKernel* host;  // nullptr: named by the image, but the double has no host build
};

struct ihipModule_t {
    int device;
    std::string image;
    std::map<std::string, std::unique_ptr<ihipModuleSymbol_t>> functions;
};

namespace {

constexpr const char* kVendor = "HIP";
constexpr const char* kStream = "hipStream_t";
constexpr const char* kEvent = "hipEvent_t";
constexpr const char* kModule = "hipModule_t";
constexpr const char* kFunction = "hipFunction_t";
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -1;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kMaxSharedMemory = 64 * 1024;

struct Device {
    std::atomic<hipError_t> sticky{hipSuccess};  // a kernel fault
    std::mutex mutex;
    std::vector<std::shared_ptr<ihipStream_t>> streams;  // destroyed ones too, until they drain
};

// Runtime-wide state, never destroyed: streams may still run, and the plugin may still call in,
// while the process exits.
std::mutex g_mutex;  // guards g_initialized
bool g_initialized = false;
auto& g_devices = *new std::vector<std::unique_ptr<Device>>();
auto& g_memory = *new polyhal::doubles::AddressSpace();
auto& g_handles = *new polyhal::doubles::HandleRegistry();

// The calling thread's current device: device 0 until the thread sets another. Kept in a table,
// not in thread_local storage, which LeakSanitizer's tracer fails to read in this dlopen'ed
// library at exit.
int& currentDevice() {
    static std::mutex mutex;
    static auto& devices = *new std::unordered_map<std::thread::id, int>();
    std::lock_guard<std::mutex> lock(mutex);
    return devices.try_emplace(std::this_thread::get_id(), 0).first->second;
}

size_t environmentSize(const char* name, size_t fallback) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::strtoull(value, nullptr, 0) : fallback;
}

void initializeOnce() {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_initialized) return;
    const size_t count = environmentSize("POLYHAL_HIP_DOUBLE_DEVICES", 1);
    g_memory.addDevices(count, environmentSize("POLYHAL_HIP_DOUBLE_MEMORY", size_t{1} << 30));
    for (size_t i = 0; i < count; ++i) g_devices.push_back(std::make_unique<Device>());
    g_initialized = true;
}

// Every entry: not from a stream callback. HIP initialises itself on first use.
void enter(const char* function) {
    if (polyhal::doubles::onHostFunctionThread()) {
        breach(kVendor, "%s called from inside a stream callback (HIP forbids runtime calls there)",
               function);
    }
    initializeOnce();
}

#define ENTER() enter(__func__)

template <class T>
T* requireLive(const char* function, T* handle, const char* kind) {
    if (handle == nullptr || !g_handles.isLive(handle, kind)) {
        breach(kVendor, "%s: %s %p is not alive (never created, or destroyed)", function, kind,
               static_cast<const void*>(handle));
    }
    return handle;
}

void requireSameDevice(const char* function, int first, const char* firstWhat, int second,
                       const char* secondWhat) {
    if (first != second) {
        breach(kVendor, "%s: %s is of device %d, %s of device %d", function, firstWhat, first,
               secondWhat, second);
    }
}

bool validDevice(int device) { return device >= 0 && device < static_cast<int>(g_devices.size()); }

std::shared_ptr<Marker> lastRecord(hipEvent_t event) {
    std::lock_guard<std::mutex> lock(event->mutex);
    return event->last;
}

// Does the copy's direction match where its pointers lie?
bool directionMatches(hipMemcpyKind kind, const Place& to, const Place& from) {
    const bool toDevice = to.kind == Place::kDevice;
    const bool fromDevice = from.kind == Place::kDevice;
    switch (kind) {
        case hipMemcpyHostToHost: return !toDevice && !fromDevice;
        case hipMemcpyHostToDevice: return toDevice && !fromDevice;
        case hipMemcpyDeviceToHost: return !toDevice && fromDevice;
        case hipMemcpyDeviceToDevice: return toDevice && fromDevice;
        case hipMemcpyDefault: return true;
        default: return false;
    }
}

}  // namespace

extern "C" {

hipError_t hipInit(unsigned int flags) {
    ENTER();
    return flags == 0 ? hipSuccess : hipErrorInvalidValue;
}

const char* hipGetErrorName(hipError_t error) {
    switch (error) {
#define POLYHAL_NAME(value) \
    case value: return #value;
        POLYHAL_NAME(hipSuccess)
        POLYHAL_NAME(hipErrorInvalidValue)
        POLYHAL_NAME(hipErrorOutOfMemory)
        POLYHAL_NAME(hipErrorInvalidDevice)
        POLYHAL_NAME(hipErrorInvalidImage)
        POLYHAL_NAME(hipErrorInvalidHandle)
        POLYHAL_NAME(hipErrorNotFound)
        POLYHAL_NAME(hipErrorNotReady)
        POLYHAL_NAME(hipErrorLaunchFailure)
        POLYHAL_NAME(hipErrorNotSupported)
        POLYHAL_NAME(hipErrorInvalidMemcpyDirection)
#undef POLYHAL_NAME
        default: return "hipErrorUnknown";
    }
}

const char* hipGetErrorString(hipError_t error) { return hipGetErrorName(error); }

// ---- Devices ----

hipError_t hipGetDeviceCount(int* count) {
    ENTER();
    *count = static_cast<int>(g_devices.size());
    return hipSuccess;
}

hipError_t hipDeviceGet(hipDevice_t* device, int ordinal) {
    ENTER();
    if (!validDevice(ordinal)) return hipErrorInvalidDevice;
    *device = ordinal;
    return hipSuccess;
}

hipError_t hipDeviceGetName(char* name, int length, hipDevice_t device) {
    ENTER();
    if (!validDevice(device)) return hipErrorInvalidDevice;
    if (name == nullptr || length <= 0) return hipErrorInvalidValue;
    std::snprintf(name, static_cast<size_t>(length), "polyhal HIP runtime double %d", device);
    return hipSuccess;
}

hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device) {
    ENTER();
    if (!validDevice(device)) return hipErrorInvalidDevice;
    *bytes = g_memory.heap(device).capacity();
    return hipSuccess;
}

hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attribute, int device) {
    ENTER();
    if (!validDevice(device)) return hipErrorInvalidDevice;
    switch (attribute) {
        case hipDeviceAttributeMultiprocessorCount: *value = 4; break;
        case hipDeviceAttributeMaxThreadsPerBlock: *value = kMaxThreadsPerBlock; break;
        case hipDeviceAttributeMaxSharedMemoryPerBlock: *value = kMaxSharedMemory; break;
        case hipDeviceAttributeMemoryPoolsSupported: *value = 1; break;
        default: return hipErrorInvalidValue;
    }
    return hipSuccess;
}

hipError_t hipGetDevice(int* device) {
    ENTER();
    *device = currentDevice();
    return hipSuccess;
}

hipError_t hipSetDevice(int device) {
    ENTER();
    if (!validDevice(device)) return hipErrorInvalidDevice;
    currentDevice() = device;
    return hipSuccess;
}

hipError_t hipDeviceGetStreamPriorityRange(int* least, int* greatest) {
    ENTER();
    if (least != nullptr) *least = kLeastPriority;
    if (greatest != nullptr) *greatest = kGreatestPriority;
    return hipSuccess;
}

}  // extern "C"

// Waits for every stream of `ordinal`, destroyed ones still draining included.
static hipError_t synchronizeDevice(int ordinal) {
    Device& device = *g_devices[static_cast<size_t>(ordinal)];
    std::vector<std::shared_ptr<ihipStream_t>> streams;
    {
        std::lock_guard<std::mutex> lock(device.mutex);
        streams = device.streams;
    }
    for (const auto& stream : streams) stream->timeline.synchronize();
    return device.sticky.load();
}

extern "C" {

hipError_t hipDeviceSynchronize() {
    ENTER();
    return synchronizeDevice(currentDevice());
}

// ---- Memory ----

hipError_t hipMemGetInfo(size_t* free, size_t* total) {
    ENTER();
    *free = g_memory.heap(currentDevice()).available();
    *total = g_memory.heap(currentDevice()).capacity();
    return hipSuccess;
}

hipError_t hipMalloc(void** pointer, size_t size) {
    ENTER();
    if (pointer == nullptr) return hipErrorInvalidValue;
    if (size == 0) {
        *pointer = nullptr;
        return hipSuccess;
    }
    *pointer = g_memory.heap(currentDevice()).allocate(size);
    return *pointer != nullptr ? hipSuccess : hipErrorOutOfMemory;
}

// hipFree synchronises the device that owns the memory.
hipError_t hipFree(void* pointer) {
    ENTER();
    if (pointer == nullptr) return hipSuccess;
    const int owner = g_memory.deviceOf(pointer);
    if (owner < 0) return hipErrorInvalidValue;
    if (const hipError_t synchronized = synchronizeDevice(owner)) return synchronized;
    return g_memory.heap(owner).release(pointer) ? hipSuccess : hipErrorInvalidValue;
}

// Stream-ordered: released when the stream reaches the free; no other stream waits.
hipError_t hipFreeAsync(void* pointer, hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream);
    const int owner = g_memory.deviceOf(pointer);
    if (owner < 0) return hipErrorInvalidValue;
    requireSameDevice(__func__, owner, "the memory", stream->device, "the stream");
    polyhal::doubles::DeviceHeap* heap = &g_memory.heap(owner);
    stream->timeline.submit([heap, pointer] { heap->release(pointer); });
    return hipSuccess;
}

hipError_t hipHostMalloc(void** pointer, size_t size, unsigned int flags) {
    ENTER();
    if (pointer == nullptr || size == 0 ||
        (flags & ~(hipHostMallocPortable | hipHostMallocMapped | hipHostMallocWriteCombined)) != 0) {
        return hipErrorInvalidValue;
    }
    *pointer = g_memory.allocatePinned(size);
    return *pointer != nullptr ? hipSuccess : hipErrorOutOfMemory;
}

hipError_t hipHostFree(void* pointer) {
    ENTER();
    return g_memory.freePinned(pointer) ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipMemcpyAsync(void* dst, const void* src, size_t count, hipMemcpyKind kind,
                          hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream);
    Place to{};
    Place from{};
    if (!g_memory.locate(dst, count, &to) || !g_memory.locate(src, count, &from)) {
        return hipErrorInvalidValue;
    }
    if (!directionMatches(kind, to, from)) return hipErrorInvalidMemcpyDirection;
    if (hipError_t sticky = g_devices[static_cast<size_t>(stream->device)]->sticky.load()) {
        return sticky;
    }
    polyhal::doubles::submitCopy(stream->timeline, to, from, count);
    return hipSuccess;
}

hipError_t hipMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                              size_t count, hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream);
    Place to{};
    Place from{};
    if (!validDevice(dstDevice) || !validDevice(srcDevice)) return hipErrorInvalidDevice;
    if (!g_memory.locate(dst, count, &to) || !g_memory.locate(src, count, &from)) {
        return hipErrorInvalidValue;
    }
    if (to.kind != Place::kDevice || from.kind != Place::kDevice) return hipErrorInvalidValue;
    requireSameDevice(__func__, to.device, "the destination", dstDevice, "dstDevice");
    requireSameDevice(__func__, from.device, "the source", srcDevice, "srcDevice");
    polyhal::doubles::submitCopy(stream->timeline, to, from, count);
    return hipSuccess;
}

// Device or page-locked memory; pageable host memory is refused as the runtime refuses it.
hipError_t hipMemsetD8Async(hipDeviceptr_t dst, unsigned char value, size_t count,
                            hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream);
    Place to{};
    if (!g_memory.locate(dst, count, &to) || to.kind == Place::kPageable) {
        return hipErrorInvalidValue;
    }
    polyhal::doubles::submitFill(stream->timeline, to, value, count);
    return hipSuccess;
}

// ---- Streams ----

hipError_t hipStreamCreateWithPriority(hipStream_t* handle, unsigned int flags, int priority) {
    ENTER();
    if (flags != hipStreamDefault && flags != hipStreamNonBlocking) return hipErrorInvalidValue;
    // Priorities order nothing here: every stream has a thread of its own.
    (void)priority;
    auto stream = std::make_shared<ihipStream_t>();
    stream->device = currentDevice();
    *handle = stream.get();
    Device& device = *g_devices[static_cast<size_t>(currentDevice())];
    {
        std::lock_guard<std::mutex> lock(device.mutex);
        auto& streams = device.streams;
        streams.erase(std::remove_if(streams.begin(), streams.end(),
                                     [](const auto& old) {
                                         return old->destroyed && old->timeline.idle();
                                     }),
                      streams.end());
        streams.push_back(std::move(stream));
    }
    g_handles.add(*handle, kStream);
    return hipSuccess;
}

// Returns at once; the stream's work still runs.
hipError_t hipStreamDestroy(hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream)->destroyed = true;
    g_handles.remove(stream);
    return hipSuccess;
}

hipError_t hipStreamSynchronize(hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream)->timeline.synchronize();
    return g_devices[static_cast<size_t>(stream->device)]->sticky.load();
}

hipError_t hipStreamQuery(hipStream_t stream) {
    ENTER();
    requireLive(__func__, stream, kStream);
    if (hipError_t sticky = g_devices[static_cast<size_t>(stream->device)]->sticky.load()) {
        return sticky;
    }
    return stream->timeline.idle() ? hipSuccess : hipErrorNotReady;
}

// The event may be of another device.
hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags) {
    ENTER();
    requireLive(__func__, stream, kStream);
    requireLive(__func__, event, kEvent);
    if (flags != 0) return hipErrorInvalidValue;
    if (std::shared_ptr<Marker> last = lastRecord(event)) stream->timeline.waitFor(std::move(last));
    return hipSuccess;
}

hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback, void* userData,
                                unsigned int flags) {
    ENTER();
    requireLive(__func__, stream, kStream);
    if (callback == nullptr || flags != 0) return hipErrorInvalidValue;
    struct Call {
        hipStream_t stream;
        hipStreamCallback_t callback;
        void* userData;
    };
    auto* call = new Call{stream, callback, userData};
    stream->timeline.submitHostFunction(
        [](void* pending) {
            const std::unique_ptr<Call> owned(static_cast<Call*>(pending));
            owned->callback(owned->stream, hipSuccess, owned->userData);
        },
        call);
    return hipSuccess;
}

// ---- Events ----

hipError_t hipEventCreateWithFlags(hipEvent_t* handle, unsigned flags) {
    ENTER();
    if ((flags & ~(hipEventBlockingSync | hipEventDisableTiming | hipEventInterprocess)) != 0) {
        return hipErrorInvalidValue;
    }
    auto* event = new ihipEvent_t{currentDevice(), flags, {}, nullptr};
    g_handles.add(event, kEvent);
    *handle = event;
    return hipSuccess;
}

hipError_t hipEventDestroy(hipEvent_t event) {
    ENTER();
    requireLive(__func__, event, kEvent);
    g_handles.remove(event);
    delete event;
    return hipSuccess;
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
    ENTER();
    requireLive(__func__, event, kEvent);
    requireLive(__func__, stream, kStream);
    requireSameDevice(__func__, event->device, "the event", stream->device, "the stream");
    std::shared_ptr<Marker> marker = stream->timeline.mark();
    std::lock_guard<std::mutex> lock(event->mutex);
    event->last = std::move(marker);
    return hipSuccess;
}

hipError_t hipEventQuery(hipEvent_t event) {
    ENTER();
    requireLive(__func__, event, kEvent);
    const std::shared_ptr<Marker> last = lastRecord(event);
    return last && !last->done() ? hipErrorNotReady : hipSuccess;
}

hipError_t hipEventSynchronize(hipEvent_t event) {
    ENTER();
    requireLive(__func__, event, kEvent);
    if (const std::shared_ptr<Marker> last = lastRecord(event)) last->wait();
    return hipSuccess;
}

hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t end) {
    ENTER();
    requireLive(__func__, start, kEvent);
    requireLive(__func__, end, kEvent);
    if (ms == nullptr) return hipErrorInvalidValue;
    if (((start->flags | end->flags) & hipEventDisableTiming) != 0) return hipErrorInvalidHandle;
    const std::shared_ptr<Marker> first = lastRecord(start);
    const std::shared_ptr<Marker> second = lastRecord(end);
    if (!first || !second) return hipErrorInvalidHandle;
    if (!first->done() || !second->done()) return hipErrorNotReady;
    *ms = std::chrono::duration<float, std::milli>(second->time() - first->time()).count();
    return hipSuccess;
}

// ---- Modules and kernels ----

// A code object is an ELF image: accepted and recorded, its kernels looked up by symbol name.
hipError_t hipModuleLoadDataEx(hipModule_t* handle, const void* image, unsigned int /*numOptions*/,
                               hipJitOption* /*options*/, void** /*values*/) {
    ENTER();
    if (handle == nullptr || image == nullptr) return hipErrorInvalidValue;
    const auto* bytes = static_cast<const unsigned char*>(image);
    if (std::memcmp(bytes, "\x7f" "ELF", 4) != 0) return hipErrorInvalidImage;
    uint64_t sectionHeaders = 0;
    uint16_t entrySize = 0;
    uint16_t entries = 0;
    std::memcpy(&sectionHeaders, bytes + 0x28, sizeof sectionHeaders);
    std::memcpy(&entrySize, bytes + 0x3a, sizeof entrySize);
    std::memcpy(&entries, bytes + 0x3c, sizeof entries);
    auto* module = new ihipModule_t{
        currentDevice(),
        std::string(reinterpret_cast<const char*>(bytes), sectionHeaders + entrySize * entries),
        {}};
    g_handles.add(module, kModule);
    *handle = module;
    return hipSuccess;
}

hipError_t hipModuleUnload(hipModule_t module) {
    ENTER();
    requireLive(__func__, module, kModule);
    for (auto& [name, function] : module->functions) g_handles.remove(function.get());
    g_handles.remove(module);
    delete module;
    return hipSuccess;
}

hipError_t hipModuleGetFunction(hipFunction_t* handle, hipModule_t module, const char* name) {
    ENTER();
    requireLive(__func__, module, kModule);
    if (name == nullptr) return hipErrorInvalidValue;
    if (module->image.find(std::string(name) + '\0') == std::string::npos) return hipErrorNotFound;
    auto& function = module->functions[name];
    if (!function) {
        function = std::make_unique<ihipModuleSymbol_t>();
        function->module = module;
        function->name = name;
        function->host = polyhal::doubles::findHostKernel(name);
        g_handles.add(function.get(), kFunction);
    }
    *handle = function.get();
    return hipSuccess;
}

hipError_t hipModuleLaunchKernel(hipFunction_t function, unsigned gridX, unsigned gridY,
                                 unsigned gridZ, unsigned blockX, unsigned blockY, unsigned blockZ,
                                 unsigned sharedBytes, hipStream_t stream, void** params,
                                 void** extra) {
    ENTER();
    requireLive(__func__, function, kFunction);
    requireLive(__func__, stream, kStream);
    requireSameDevice(__func__, function->module->device, "the kernel", stream->device,
                      "the stream");
    Device& device = *g_devices[static_cast<size_t>(stream->device)];
    if (hipError_t sticky = device.sticky.load()) return sticky;
    if (extra != nullptr) return hipErrorNotSupported;
    if (gridX == 0 || gridY == 0 || gridZ == 0 || blockX == 0 || blockY == 0 || blockZ == 0 ||
        uint64_t{blockX} * blockY * blockZ > kMaxThreadsPerBlock ||
        sharedBytes > static_cast<unsigned>(kMaxSharedMemory)) {
        return hipErrorInvalidValue;
    }
    const HostKernel* kernel = function->host;
    if (kernel == nullptr) return hipErrorNotSupported;
    std::vector<std::vector<unsigned char>> arguments;
    const std::string problem =
        polyhal::doubles::packArguments(*kernel, params, g_memory, stream->device, &arguments);
    if (!problem.empty()) breach(kVendor, "hipModuleLaunchKernel: %s", problem.c_str());
    const halDim3 grid{gridX, gridY, gridZ};
    const halDim3 block{blockX, blockY, blockZ};
    stream->timeline.submit([=, &device, arguments = std::move(arguments)] {
        if (polyhal::doubles::runHostKernel(*kernel, grid, block, sharedBytes, arguments) != 0) {
            device.sticky.store(hipErrorLaunchFailure);
        }
    });
    return hipSuccess;
}

}  // extern "C"
