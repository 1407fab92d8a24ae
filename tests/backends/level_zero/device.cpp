// Initialisation, the driver, its devices and contexts.
//
// The double has one driver with POLYHAL_ZE_DOUBLE_DEVICES GPU devices (default 1), each with
// POLYHAL_ZE_DOUBLE_MEMORY bytes of device memory (default 1 GiB), two command queue groups
// (compute and copy with four queues, copy-only with two; with shared rings, see sharedRings())
// and peer access between them all. It
// offers ZE_experimental_immediate_command_list_append as compute-runtime does, reached as there
// through the loader only (driverGetExtensionFunctionAddress below).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "driver_double.hpp"
#include "entries.hpp"

namespace zedouble {
namespace {

constexpr char kDeviceName[] = "polyhal Level Zero driver double";
constexpr uint32_t kComputeQueues = 4;
constexpr uint32_t kCopyQueues = 2;
constexpr char kImmediateAppendExtension[] = "ZE_experimental_immediate_command_list_append";

uint64_t environmentNumber(const char* name, uint64_t fallback) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return fallback;
    return std::strtoull(text, nullptr, 0);
}

ze_driver_handle_t theDriver() {
    static ze_driver_handle_t const driver = [] {
        auto* made = new _ze_driver_handle_t;
        const uint64_t count =
            std::max<uint64_t>(1, environmentNumber("POLYHAL_ZE_DOUBLE_DEVICES", 1));
        for (uint32_t ordinal = 0; ordinal < count; ++ordinal) {
            made->devices.push_back(new _ze_device_handle_t{made, ordinal});
        }
        return made;
    }();
    return driver;
}

std::atomic<bool> initialized{false};

ze_result_t notInitialized() {
    return initialized ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_UNINITIALIZED;
}

template <typename T>
ze_result_t fillList(uint32_t* count, T* out, const std::vector<T>& items) {
    if (*count == 0 || out == nullptr) {
        *count = static_cast<uint32_t>(items.size());
        return ZE_RESULT_SUCCESS;
    }
    *count = std::min<uint32_t>(*count, static_cast<uint32_t>(items.size()));
    std::copy_n(items.begin(), *count, out);
    return ZE_RESULT_SUCCESS;
}

}  // namespace

uint64_t deviceMemoryBytes() {
    static const uint64_t bytes = environmentNumber("POLYHAL_ZE_DOUBLE_MEMORY", uint64_t{1} << 30);
    return bytes;
}
uint32_t maxGroupSize() {
    return 1024;
}
uint32_t maxSharedLocalMemory() {
    return 64 * 1024;
}

ze_result_t ZE_APICALL init(ze_init_flags_t /*flags*/) {
    theDriver();
    initialized = true;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL driverGet(uint32_t* count, ze_driver_handle_t* drivers) {
    if (ze_result_t result = notInitialized(); result != ZE_RESULT_SUCCESS) return result;
    return fillList(count, drivers, std::vector<ze_driver_handle_t>{theDriver()});
}

ze_result_t ZE_APICALL driverGetApiVersion(ze_driver_handle_t, ze_api_version_t* version) {
    *version = ZE_API_VERSION_1_4;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL driverGetProperties(ze_driver_handle_t, ze_driver_properties_t* properties) {
    std::memset(properties->uuid.id, 0, sizeof properties->uuid.id);
    std::memcpy(properties->uuid.id, "polyhal-zedouble", 16);
    properties->driverVersion = 1;
    return ZE_RESULT_SUCCESS;
}

// Device memory can be shared between processes; event pools cannot (no ZE_EVENT_POOL_FLAG_IPC).
ze_result_t ZE_APICALL driverGetIpcProperties(ze_driver_handle_t,
                                              ze_driver_ipc_properties_t* properties) {
    properties->flags = ZE_IPC_PROPERTY_FLAG_MEMORY;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL driverGetExtensionProperties(ze_driver_handle_t, uint32_t* count,
                                                    ze_driver_extension_properties_t* extensions) {
    std::vector<ze_driver_extension_properties_t> offered(2);
    std::strncpy(offered[0].name, ZE_RELAXED_ALLOCATION_LIMITS_EXP_NAME,
                 sizeof offered[0].name - 1);
    offered[0].version = ZE_RELAXED_ALLOCATION_LIMITS_EXP_VERSION_CURRENT;
    // compute-runtime lists it (level_zero/core/source/driver/driver_handle_helper.cpp:58).
    std::strncpy(offered[1].name, kImmediateAppendExtension, sizeof offered[1].name - 1);
    offered[1].version = ZE_MAKE_VERSION(1, 0);
    return fillList(count, extensions, offered);
}

// compute-runtime hands out only the functions of its own list here
// (level_zero/core/source/driver/extension_function_address.cpp:26-178), which has no
// zeCommandListImmediateAppendCommandListsExp: that one reaches the driver only through the
// loader, from its CommandListExp dispatch table (level_zero/api/core/ze_core_loader.cpp:313;
// ddi.cpp here). Anything else is an invalid argument (driver_handle.cpp:156-161).
ze_result_t ZE_APICALL driverGetExtensionFunctionAddress(ze_driver_handle_t, const char*,
                                                         void** function) {
    *function = nullptr;
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

ze_result_t ZE_APICALL deviceGet(ze_driver_handle_t driver, uint32_t* count,
                                 ze_device_handle_t* devices) {
    return fillList(count, devices, driver->devices);
}

ze_result_t ZE_APICALL deviceGetSubDevices(ze_device_handle_t, uint32_t* count,
                                           ze_device_handle_t*) {
    *count = 0;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL deviceGetProperties(ze_device_handle_t device,
                                           ze_device_properties_t* properties) {
    const ze_structure_type_t stype = properties->stype;
    void* const next = properties->pNext;
    *properties = ze_device_properties_t{};
    properties->stype = stype;
    properties->pNext = next;
    properties->type = ZE_DEVICE_TYPE_GPU;
    properties->deviceId = 0x0d0b + device->ordinal;
    properties->coreClockRate = 1000;
    properties->maxMemAllocSize = std::min<uint64_t>(deviceMemoryBytes(), uint64_t{4} << 30);
    properties->maxHardwareContexts = 64;
    properties->maxCommandQueuePriority = 2;
    properties->numThreadsPerEU = 8;
    properties->physicalEUSimdWidth = 8;
    properties->numEUsPerSubslice = 8;
    properties->numSubslicesPerSlice = 4;
    properties->numSlices = 1;
    // The 1.2 form counts ticks per second; the older one gives nanoseconds per tick.
    properties->timerResolution = stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 ? 1000000000 : 1;
    properties->timestampValidBits = 64;
    properties->kernelTimestampValidBits = 32;
    properties->uuid.id[0] = static_cast<uint8_t>(device->ordinal + 1);
    std::strncpy(properties->name, kDeviceName, sizeof properties->name - 1);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL deviceGetComputeProperties(ze_device_handle_t,
                                                  ze_device_compute_properties_t* properties) {
    properties->maxTotalGroupSize = maxGroupSize();
    properties->maxGroupSizeX = maxGroupSize();
    properties->maxGroupSizeY = maxGroupSize();
    properties->maxGroupSizeZ = 64;
    properties->maxGroupCountX = UINT32_MAX;
    properties->maxGroupCountY = 65535;
    properties->maxGroupCountZ = 65535;
    properties->maxSharedLocalMemory = maxSharedLocalMemory();
    properties->numSubGroupSizes = 1;
    properties->subGroupSizes[0] = 8;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL deviceGetMemoryProperties(ze_device_handle_t, uint32_t* count,
                                                 ze_device_memory_properties_t* memories) {
    if (*count == 0 || memories == nullptr) {
        *count = 1;
        return ZE_RESULT_SUCCESS;
    }
    *count = 1;
    memories[0].flags = 0;
    memories[0].maxClockRate = 1000;
    memories[0].maxBusWidth = 64;
    memories[0].totalSize = deviceMemoryBytes();
    std::strncpy(memories[0].name, "memfd", sizeof memories[0].name - 1);
    return ZE_RESULT_SUCCESS;
}

// Every kind of memory is load/store and atomic for the double's device, shared allocations
// included (as Intel's GPUs report them).
ze_result_t ZE_APICALL deviceGetMemoryAccessProperties(
    ze_device_handle_t, ze_device_memory_access_properties_t* properties) {
    constexpr ze_memory_access_cap_flags_t kAll =
        ZE_MEMORY_ACCESS_CAP_FLAG_RW | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC;
    properties->hostAllocCapabilities = kAll;
    properties->deviceAllocCapabilities = kAll;
    properties->sharedSingleDeviceAllocCapabilities = kAll;
    properties->sharedCrossDeviceAllocCapabilities = 0;
    properties->sharedSystemAllocCapabilities = 0;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL deviceGetCommandQueueGroupProperties(
    ze_device_handle_t, uint32_t* count, ze_command_queue_group_properties_t* groups) {
    if (*count == 0 || groups == nullptr) {
        *count = 2;
        return ZE_RESULT_SUCCESS;
    }
    *count = std::min<uint32_t>(*count, 2);
    groups[0].flags =
        ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    groups[0].maxMemoryFillPatternSize = 128;
    groups[0].numQueues = queueCount(0);
    if (*count > 1) {
        groups[1].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
        groups[1].maxMemoryFillPatternSize = 4;
        groups[1].numQueues = queueCount(1);
    }
    return ZE_RESULT_SUCCESS;
}

bool sharedRings() {
    static const bool shared = std::getenv("POLYHAL_ZE_DOUBLE_SHARED_RINGS") != nullptr;
    return shared;
}

namespace {

// Engines per command queue group: four compute and two copy engines, or with shared rings
// what POLYHAL_ZE_DOUBLE_SHARED_RINGS says (default one of each, as DG2, Meteor Lake and Lunar
// Lake expose).
std::pair<uint32_t, uint32_t> engineCounts() {
    static const std::pair<uint32_t, uint32_t> counts = [] {
        if (!sharedRings()) return std::make_pair(kComputeQueues, kCopyQueues);
        unsigned compute = 1, copy = 1;
        std::sscanf(std::getenv("POLYHAL_ZE_DOUBLE_SHARED_RINGS"), "%u,%u", &compute, &copy);
        return std::make_pair(std::max(compute, 1u), std::max(copy, 1u));
    }();
    return counts;
}

}  // namespace

uint32_t queueCount(uint32_t ordinal) {
    return ordinal == 0 ? engineCounts().first : ordinal == 1 ? engineCounts().second : 0;
}

ze_result_t ZE_APICALL deviceCanAccessPeer(ze_device_handle_t, ze_device_handle_t,
                                           ze_bool_t* value) {
    *value = 1;
    return ZE_RESULT_SUCCESS;
}

// As compute-runtime's Device::getStatus (level_zero/core/source/device/device.cpp:98-110): lost
// once a hang was detected on one of its engines, whose command stream receivers read the kernel
// driver's reset statistics of the DRM contexts they opened at zeInit (shared/source/
// os_interface/linux/drm_neo.cpp, Drm::checkResetStatus). Neither a new context nor anything else
// a process can call opens those again: the loss lasts until the process exits. The double loses
// every device at once.
ze_result_t ZE_APICALL deviceGetStatus(ze_device_handle_t) {
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().deviceLost ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL contextCreate(ze_driver_handle_t driver, const ze_context_desc_t*,
                                     ze_context_handle_t* context) {
    std::lock_guard<std::mutex> lock(state().mutex);
    *context = new _ze_context_handle_t{driver};
    addHandle(*context, Kind::Context);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL contextDestroy(ze_context_handle_t context) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeContextDestroy");
    removeHandle(context);
    delete context;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL contextGetStatus(ze_context_handle_t) {
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().deviceLost ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

}  // namespace zedouble
