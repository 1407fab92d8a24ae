// The runtime: initialised once, it opens every device of the loaded backends.
#include "runtime.hpp"

#include <mutex>
#include <string>

#include "call_gate.hpp"
#include "check/hooks.hpp"
#include "error.hpp"
#include "legacy_stream.hpp"
#include "loader.hpp"
#include "log.hpp"
#include "trace/recorder.hpp"

namespace polyhal {
namespace call_gate::detail {
// Released once initialisation succeeds (initializeSlow).
Reasons g_reasons{{1}};
}  // namespace call_gate::detail

namespace detail {

std::atomic<bool> g_ready{false};
Runtime* g_runtime = nullptr;

namespace {

// The kernel argument limit of a plugin that reports none: CUDA's classic 4 KiB.
constexpr uint64_t kDefaultMaxKernelArgumentBytes = 4096;

std::mutex g_initMutex;
bool g_attempted = false;
halError g_initStatus = HAL_SUCCESS;
std::string g_initMessage;

// The capabilities the table can serve: each absent entry takes away those it backs
// (HAL_PLUGIN_ENTRIES), whatever a device says of itself.
uint64_t servedCapabilities(const halPluginDispatchTable& table) {
    uint64_t served = ~uint64_t{0};
#define POLYHAL_CLEAR_UNSERVED(entry, requirement, capabilities, group) \
    if (table.entry == nullptr) served &= ~uint64_t{capabilities};
    HAL_PLUGIN_ENTRIES(POLYHAL_CLEAR_UNSERVED)
#undef POLYHAL_CLEAR_UNSERVED
    return served;
}

halError openDevices(Runtime& rt) {
    for (auto& backend : rt.backends) {
        for (int i = 0; i < backend->deviceCount; ++i) {
            auto device = std::make_unique<Device>();
            device->backend = backend.get();
            device->vtable = &backend->table;
            device->ordinal = static_cast<int>(rt.devices.size());
            device->backendOrdinal = i;
            halError status = backend->table.deviceOpen(i, &device->native);
            if (status != HAL_SUCCESS) {
                return adoptPluginError(status, backend->name.c_str(), "deviceOpen");
            }
            device->info = {};
            device->info.size = sizeof(halPluginDeviceInfo);
            status = backend->table.deviceGetInfo(device->native, &device->info);
            if (status != HAL_SUCCESS) {
                return adoptPluginError(status, backend->name.c_str(), "deviceGetInfo");
            }
            device->info.capabilities &= servedCapabilities(backend->table);
            if (device->info.maxKernelArgumentBytes == 0) {
                device->info.maxKernelArgumentBytes = kDefaultMaxKernelArgumentBytes;
            }
            device->poolDevice = std::make_unique<PoolDevice>(*device);
            device->pool = std::make_unique<allocator::DevicePool>(*device->poolDevice);
            logger().info("device {}: {} ({} backend, device {})", device->ordinal,
                          device->info.name, backend->name, i);
            rt.devices.push_back(std::move(device));
        }
        // The devices are those of the one answer the backend gave when it started. A plugin
        // whose answer has changed since cannot be trusted with the ordinals it handed out.
        int count = 0;
        if (halError status = backend->table.deviceGetCount(&count)) {
            return adoptPluginError(status, backend->name.c_str(), "deviceGetCount");
        }
        if (count != backend->deviceCount) {
            return fail(HAL_ERROR_BACKEND_INCOMPATIBLE,
                        "{} ({}): deviceGetCount answered {}, then {} once its devices were "
                        "open; the count must not change",
                        backend->name, backend->location, backend->deviceCount, count);
        }
    }
    return HAL_SUCCESS;
}

halError initializeOnce() {
    // Kept even when initialisation fails: loaded plugins stay loaded (their threads may run).
    g_runtime = new Runtime();
    halError status = loadBackends(&g_runtime->backends);
    if (status == HAL_SUCCESS) status = openDevices(*g_runtime);
    if (status == HAL_SUCCESS) status = defaultStreamModeFromEnvironment();
    if (status == HAL_SUCCESS) {
        check::startFromEnvironment();
        trace::startFromEnvironment();
    }
    return status;
}

}  // namespace

halError initializeSlow() {
    std::lock_guard<std::mutex> lock(g_initMutex);
    if (!g_attempted) {
        g_attempted = true;
        try {
            g_initStatus = initializeOnce();
        } catch (const std::exception& e) {
            g_initStatus = fail(HAL_ERROR_UNKNOWN, "initialisation failed: {}", e.what());
        }
        if (g_initStatus == HAL_SUCCESS) {
            // What went wrong on the way (a plugin automatic selection skipped, a trace that
            // could not start) was logged; a successful initialisation leaves no error behind.
            setLastErrorMessage({});
            g_ready.store(true, std::memory_order_release);
            call_gate::release();  // the reason it started with
            return HAL_SUCCESS;
        }
        g_initMessage = lastErrorMessage();
        logger().error("initialisation failed: {}", g_initMessage);
    }
    if (g_initStatus != HAL_SUCCESS) setLastErrorMessage(g_initMessage);
    return g_initStatus;
}

}  // namespace detail

Runtime::Runtime()
    : streams(1u << 16),
      events(1u << 22),
      modules(1u << 14),
      functions(1u << 18),
      graphs(1u << 16) {}

int& currentDeviceOrdinal() {
    static thread_local int ordinal = 0;
    return ordinal;
}

}  // namespace polyhal
