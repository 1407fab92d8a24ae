// Loading modules, finding their kernels and launching them: the module entries.
#include "module.hpp"

#include <polyhal/plugin_support.hpp>

#include <string>

#include "device.hpp"
#include "engine/translate.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "stream.hpp"
#include "symbols.hpp"

namespace polyhal::level_zero {
namespace {

// The text of a build log (empty when there is none), without trailing NULs and newlines.
std::string buildLogText(ze_module_build_log_handle_t log) {
    size_t size = 0;
    if (log == nullptr ||
        ze.zeModuleBuildLogGetString.address(log, &size, nullptr) != ZE_RESULT_SUCCESS) {
        return {};
    }
    std::string text(size, '\0');
    if (ze.zeModuleBuildLogGetString.address(log, &size, text.data()) != ZE_RESULT_SUCCESS)
        return {};
    while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
    return text;
}

}  // namespace

halError moduleLoadData(halPluginDevice handle, const void* image, size_t size,
                        halPluginModule* module) {
    const Device& device = plugin::fromHandle<Device>(handle);
    auto loaded = std::make_unique<Module>();
    const ze_module_format_t format = moduleFormatOf(image, size);
    const ze_module_desc_t desc{ZE_STRUCTURE_TYPE_MODULE_DESC,
                                nullptr,
                                format,
                                size,
                                static_cast<const uint8_t*>(image),
                                moduleBuildFlags(device.totalMemory),
                                nullptr};
    // Where the loader wraps handles, loader 1.8 hands a failed build's log out as the driver's
    // own handle, which crashes the loader on the next call: the log is then not asked for.
    ze_module_build_log_handle_t log = nullptr;
    const ze_result_t result =
        ze.zeModuleCreate.address(device.driver->context, device.device, &desc, &loaded->module,
                                  device.driver->loaderWrapsHandles ? nullptr : &log);
    if (result != ZE_RESULT_SUCCESS) {
        const std::string text = buildLogText(log);
        if (log != nullptr) ze.zeModuleBuildLogDestroy.address(log);
        halError code = toHalError(result);
        // The image is the only argument the caller controls: whatever Level Zero rejects in
        // it makes the image unloadable.
        if (code == HAL_ERROR_INVALID_VALUE || code == HAL_ERROR_BACKEND) {
            code = HAL_ERROR_INVALID_IMAGE;
        }
        return plugin::fail(code, "zeModuleCreate (%s image, %zu bytes): %s (%s)%s%s",
                            format == ZE_MODULE_FORMAT_IL_SPIRV ? "SPIR-V" : "native binary", size,
                            resultName(result), resultDescription(result),
                            text.empty() ? "" : "; build log: ", text.c_str());
    }
    if (log != nullptr) ze.zeModuleBuildLogDestroy.address(log);
    *module = plugin::toHandle(loaded.release());
    return HAL_SUCCESS;
}

halError moduleUnload(halPluginModule module) {
    std::unique_ptr<Module> owned(&plugin::fromHandle<Module>(module));
    // Everything is released even when a step fails; the first failure is reported.
    halError first = HAL_SUCCESS;
    for (const auto& [name, function] : owned->functions) {
        const halError error =
            check(ze.zeKernelDestroy.address(function->kernel), "zeKernelDestroy");
        if (first == HAL_SUCCESS) first = error;
    }
    const halError error = check(ze.zeModuleDestroy.address(owned->module), "zeModuleDestroy");
    return first != HAL_SUCCESS ? first : error;
}

halError moduleGetFunction(halPluginModule handle, const char* name, halPluginFunction* function) {
    Module& module = plugin::fromHandle<Module>(handle);
    auto created = std::make_unique<Function>();
    std::lock_guard<std::mutex> lock(module.functionsMutex);
    auto [entry, inserted] = module.functions.try_emplace(name);
    if (!inserted) {
        *function = plugin::toHandle(entry->second.get());
        return HAL_SUCCESS;
    }
    const ze_kernel_desc_t desc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name};
    const ze_result_t result = ze.zeKernelCreate.address(module.module, &desc, &created->kernel);
    if (result != ZE_RESULT_SUCCESS) {
        module.functions.erase(entry);
        return plugin::fail(toHalError(result), "zeKernelCreate('%s'): %s (%s)", name,
                            resultName(result), resultDescription(result));
    }
    // A polyhal kernel may reach any allocation through pointers stored in memory (a struct of
    // pointers, a linked list), as a CUDA kernel may; Level Zero makes only the allocations
    // passed as arguments resident unless the kernel declares indirect access.
    const ze_result_t indirect = ze.zeKernelSetIndirectAccess.address(
        created->kernel, ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE |
                             ZE_KERNEL_INDIRECT_ACCESS_FLAG_HOST |
                             ZE_KERNEL_INDIRECT_ACCESS_FLAG_SHARED);
    if (indirect != ZE_RESULT_SUCCESS) {
        ze.zeKernelDestroy.address(created->kernel);
        module.functions.erase(entry);
        return check(indirect, "zeKernelSetIndirectAccess");
    }
    ze_kernel_properties_t properties{};
    properties.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
    const ze_result_t described = ze.zeKernelGetProperties.address(created->kernel, &properties);
    if (described != ZE_RESULT_SUCCESS) {
        ze.zeKernelDestroy.address(created->kernel);
        module.functions.erase(entry);
        return check(described, "zeKernelGetProperties");
    }
    created->name = entry->first.c_str();
    created->numParameters = properties.numKernelArgs;
    created->maxGroupSize = properties.maxSubgroupSize * properties.maxNumSubgroups;
    entry->second = std::move(created);
    *function = plugin::toHandle(entry->second.get());
    return HAL_SUCCESS;
}

halError setLaunchArguments(Function& function, halDim3 block, size_t dynamicSharedBytes,
                            const halKernelArg* args, uint32_t numArgs) {
    // Checked here, because Level Zero would only name a bad index or size.
    const bool dynamicShared = dynamicSharedBytes > 0;
    if (numArgs + (dynamicShared ? 1u : 0u) != function.numParameters) {
        return plugin::fail(
            HAL_ERROR_INVALID_VALUE,
            "kernel '%s' declares %u parameters; the launch gives %u arguments%s", function.name,
            function.numParameters, numArgs,
            dynamicShared ? " and the local pointer for dynamic shared memory" : "");
    }
    // Checked here, because the driver would only say the group size is invalid.
    const uint64_t groupSize = uint64_t{block.x} * block.y * block.z;
    if (function.maxGroupSize != 0 && groupSize > function.maxGroupSize) {
        return plugin::fail(HAL_ERROR_INVALID_VALUE,
                            "kernel '%s' takes at most %u work-items per group on this device; "
                            "the launch asks for %llu (%u x %u x %u)",
                            function.name, function.maxGroupSize,
                            static_cast<unsigned long long>(groupSize), block.x, block.y, block.z);
    }
    POLYHAL_ZE_RETURN_IF_ERROR(zeKernelSetGroupSize, function.kernel, block.x, block.y, block.z);
    for (uint32_t index = 0; index < numArgs; ++index) {
        const ze_result_t result = ze.zeKernelSetArgumentValue.address(
            function.kernel, index, args[index].size, args[index].value);
        if (result != ZE_RESULT_SUCCESS) {
            return plugin::fail(toHalError(result),
                                "kernel '%s': zeKernelSetArgumentValue(argument %u, %zu bytes): "
                                "%s (%s)",
                                function.name, index, args[index].size, resultName(result),
                                resultDescription(result));
        }
    }
    if (dynamicShared) {
        // A local-memory argument is set by its size with no value.
        const ze_result_t result = ze.zeKernelSetArgumentValue.address(function.kernel, numArgs,
                                                                       dynamicSharedBytes, nullptr);
        if (result != ZE_RESULT_SUCCESS) {
            return plugin::fail(toHalError(result),
                                "kernel '%s' cannot take %zu bytes of dynamic shared memory in "
                                "its last parameter, which must be a local pointer: "
                                "zeKernelSetArgumentValue(argument %u): %s (%s)",
                                function.name, dynamicSharedBytes, numArgs, resultName(result),
                                resultDescription(result));
        }
    }
    return HAL_SUCCESS;
}

halError launchKernel(halPluginStream stream, halPluginFunction handle, halDim3 grid, halDim3 block,
                      size_t dynamicSharedBytes, const halKernelArg* args, uint32_t numArgs) {
    Function& function = plugin::fromHandle<Function>(handle);
    std::lock_guard<std::mutex> lock(function.launchMutex);
    if (halError error = setLaunchArguments(function, block, dynamicSharedBytes, args, numArgs);
        error != HAL_SUCCESS) {
        return error;
    }
    const ze_group_count_t groups = toGroupCount(grid);
    return plugin::fromHandle<Stream>(stream).appendCommand(
        "zeCommandListAppendLaunchKernel", [&](ze_command_list_handle_t list) {
            return ze.zeCommandListAppendLaunchKernel.address(list, function.kernel, &groups,
                                                              nullptr, 0, nullptr);
        });
}

}  // namespace polyhal::level_zero
