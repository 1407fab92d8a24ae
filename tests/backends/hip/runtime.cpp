// Initialisation, error names, and the state and checks every function of the double shares.
#include <cstdlib>
#include <thread>
#include <unordered_map>

#include "runtime.hpp"

namespace polyhal::doubles::hip {

std::vector<std::unique_ptr<Device>>& g_devices = *new std::vector<std::unique_ptr<Device>>();
AddressSpace& g_memory = *new AddressSpace();
HandleRegistry& g_handles = *new HandleRegistry();
std::atomic<uint64_t> g_graphLaunches{0};

namespace {

std::mutex g_mutex;  // guards g_initialized
bool g_initialized = false;

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

}  // namespace

void enter(const char* function) {
    if (onHostFunctionThread()) {
        breach(kVendor, "%s called from inside a stream callback (HIP forbids runtime calls there)",
               function);
    }
    initializeOnce();
}

// Kept in a table, not in thread_local storage, which LeakSanitizer's tracer fails to read in
// this dlopen'ed library at exit.
int& currentDevice() {
    static std::mutex mutex;
    static auto& devices = *new std::unordered_map<std::thread::id, int>();
    std::lock_guard<std::mutex> lock(mutex);
    return devices.try_emplace(std::this_thread::get_id(), 0).first->second;
}

bool validDevice(int device) {
    return device >= 0 && device < static_cast<int>(g_devices.size());
}

void requireSameDevice(const char* function, int first, const char* firstWhat, int second,
                       const char* secondWhat) {
    if (first != second) {
        breach(kVendor, "%s: %s is of device %d, %s of device %d", function, firstWhat, first,
               secondWhat, second);
    }
}

void synchronizeDevice(int ordinal) {
    Device& device = *g_devices[static_cast<size_t>(ordinal)];
    std::vector<std::shared_ptr<ihipStream_t>> streams;
    {
        std::lock_guard<std::mutex> lock(device.mutex);
        streams = device.streams;
    }
    for (const auto& stream : streams) stream->timeline.synchronize();
}

}  // namespace polyhal::doubles::hip

using namespace polyhal::doubles;
using namespace polyhal::doubles::hip;

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

const char* hipGetErrorString(hipError_t error) {
    return hipGetErrorName(error);
}

}  // extern "C"
