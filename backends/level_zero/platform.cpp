// Finding the Level Zero drivers and their GPUs: initialize and deviceGetCount.
#include "platform.hpp"

#include <polyhal/plugin_support.hpp>

#include <algorithm>
#include <cstring>
#include <utility>

#include "engine/translate.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "symbols.hpp"

namespace polyhal::level_zero {
namespace {

// Set by initialize() and never destroyed: a loaded plugin is never unloaded, and its objects
// may be in use until the process exits, when the loader may already have been finalised.
const Platform* found = nullptr;

// The GPU devices of `handle`, with the driver (and its context) when there is one.
halError discoverDriver(ze_driver_handle_t handle, Platform* platform) {
    uint32_t count = 0;
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGet, handle, &count, nullptr);
    std::vector<ze_device_handle_t> devices(count);
    POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGet, handle, &count, devices.data());
    std::vector<ze_device_handle_t> gpus;
    for (ze_device_handle_t device : devices) {
        auto properties = describedAs<ze_device_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES);
        POLYHAL_ZE_RETURN_IF_ERROR(zeDeviceGetProperties, device, &properties);
        if (properties.type == ZE_DEVICE_TYPE_GPU) gpus.push_back(device);
    }
    if (gpus.empty()) return HAL_SUCCESS;

    const ze_context_desc_t desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ze_context_handle_t context = nullptr;
    POLYHAL_ZE_RETURN_IF_ERROR(zeContextCreate, handle, &desc, &context);
    std::unique_ptr<Driver> driver;
    try {
        driver = std::make_unique<Driver>(handle, context);
        driver->findCommandListSubmission();
        void* translated = context;
        driver->loaderWrapsHandles =
            ze.zelLoaderTranslateHandle.address != nullptr &&
            ze.zelLoaderTranslateHandle.address(ZEL_HANDLE_CONTEXT, context, &translated) ==
                ZE_RESULT_SUCCESS &&
            translated != context;
    } catch (...) {
        ze.zeContextDestroy.address(context);
        throw;
    }
    for (ze_device_handle_t gpu : gpus) platform->devices.push_back({driver.get(), gpu});
    platform->drivers.push_back(std::move(driver));
    return HAL_SUCCESS;
}

}  // namespace

Driver::Driver(ze_driver_handle_t handle, ze_context_handle_t context)
    : handle(handle),
      context(context),
      events(std::make_unique<EventSlotPool>(context)),
      ipcExports(context) {}

Driver::~Driver() {
    events.reset();
    const ze_result_t result = ze.zeContextDestroy.address(context);
    if (result != ZE_RESULT_SUCCESS) {
        plugin::log(HAL_LOG_WARN, "zeContextDestroy: %s", resultName(result));
    }
}

// An extension the driver does not offer (or fails to list) only costs native graphs.
//
// Intel's driver lists the extension (compute-runtime level_zero/core/source/driver/
// driver_handle_helper.cpp:58) but hands its function to the loader only, in the CommandListExp
// dispatch table (level_zero/api/core/ze_core_loader.cpp:313): zeDriverGetExtensionFunctionAddress
// does not know it (driver/extension_function_address.cpp:26-178). Loaders from 1.16 on
// (specification 1.9.1) export it, and reach the driver with their handles translated; with an
// older loader there is no way to call it.
void Driver::findCommandListSubmission() {
    uint32_t count = 0;
    if (ze.zeDriverGetExtensionProperties.address(handle, &count, nullptr) == ZE_RESULT_SUCCESS) {
        std::vector<ze_driver_extension_properties_t> extensions(count);
        if (ze.zeDriverGetExtensionProperties.address(handle, &count, extensions.data()) ==
            ZE_RESULT_SUCCESS) {
            offersImmediateAppend_ = std::any_of(
                extensions.begin(), extensions.begin() + count, [](const auto& extension) {
                    return std::strncmp(extension.name, ZE_IMMEDIATE_COMMAND_LIST_APPEND_EXP_NAME,
                                        sizeof extension.name) == 0;
                });
        }
    }
    submitsCommandLists_ =
        offersImmediateAppend_ && ze.zeCommandListImmediateAppendCommandListsExp.address != nullptr;
    if (!submitsCommandLists_) {
        plugin::log(HAL_LOG_INFO, "Level Zero driver %p: graphs are replayed: %s",
                    static_cast<void*>(handle), commandListSubmissionMissing());
    }
}

const char* Driver::commandListSubmissionMissing() const {
    if (!offersImmediateAppend_) {
        return "the driver does not offer " ZE_IMMEDIATE_COMMAND_LIST_APPEND_EXP_NAME;
    }
    return "the Level Zero loader (libze_loader.so.1) does not export "
           "zeCommandListImmediateAppendCommandListsExp, which loaders from 1.16 on do (Intel's "
           "driver hands the function to the loader only)";
}

ze_result_t Driver::submitCommandLists(ze_command_list_handle_t immediate,
                                       std::vector<ze_command_list_handle_t>& lists,
                                       ze_event_handle_t signal) const {
    return ze.zeCommandListImmediateAppendCommandListsExp.address(
        immediate, static_cast<uint32_t>(lists.size()), lists.data(), signal, 0, nullptr);
}

ze_result_t Driver::createCommandList(ze_device_handle_t device,
                                      const ze_command_list_desc_t& desc,
                                      ze_command_list_handle_t* list) const {
    std::lock_guard<std::mutex> lock(commandListLifetimes_);
    return ze.zeCommandListCreate.address(context, device, &desc, list);
}

ze_result_t Driver::createImmediateCommandList(ze_device_handle_t device,
                                               const ze_command_queue_desc_t& desc,
                                               ze_command_list_handle_t* list) const {
    std::lock_guard<std::mutex> lock(commandListLifetimes_);
    return ze.zeCommandListCreateImmediate.address(context, device, &desc, list);
}

ze_result_t Driver::destroyCommandList(ze_command_list_handle_t list) const {
    std::lock_guard<std::mutex> lock(commandListLifetimes_);
    return ze.zeCommandListDestroy.address(list);
}

const Platform& platform() {
    return *found;
}

halError initialize() {
    if (halError error = loadSymbols(); error != HAL_SUCCESS) return error;
    const ze_result_t initialized = ze.zeInit.address(ZE_INIT_FLAG_GPU_ONLY);
    if (initialized != ZE_RESULT_SUCCESS) {
        return plugin::fail(HAL_ERROR_NO_DEVICE,
                            "no Level Zero driver was found: zeInit(ZE_INIT_FLAG_GPU_ONLY) "
                            "returned %s (%s)",
                            resultName(initialized), resultDescription(initialized));
    }
    uint32_t count = 0;
    POLYHAL_ZE_RETURN_IF_ERROR(zeDriverGet, &count, nullptr);
    std::vector<ze_driver_handle_t> drivers(count);
    POLYHAL_ZE_RETURN_IF_ERROR(zeDriverGet, &count, drivers.data());
    if (count == 0) {
        return plugin::fail(HAL_ERROR_NO_DEVICE,
                            "no Level Zero driver was found: zeDriverGet reports none");
    }
    Platform discovered;
    for (ze_driver_handle_t driver : drivers) {
        if (halError error = discoverDriver(driver, &discovered); error != HAL_SUCCESS) {
            return error;
        }
    }
    if (discovered.devices.empty()) {
        return plugin::fail(HAL_ERROR_NO_DEVICE,
                            "no Level Zero GPU was found: %u driver(s) report no GPU device",
                            count);
    }
    found = new Platform(std::move(discovered));
    return HAL_SUCCESS;
}

halError deviceGetCount(int* count) {
    *count = static_cast<int>(platform().devices.size());
    return HAL_SUCCESS;
}

// After CUDA and HIP: a machine with an NVIDIA or AMD GPU and Intel's Level Zero driver uses the
// discrete GPU's own backend first.
halError backendGetInfo(halPluginBackendInfo* info) {
    return plugin::describeBackend(info, 100, 14 /* kDLOneAPI */, "spv" /* SPIR-V */);
}

}  // namespace polyhal::level_zero
