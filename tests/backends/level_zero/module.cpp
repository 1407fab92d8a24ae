// Modules and kernels.
//
// A module is a SPIR-V image: the double records it and reads each kernel's declared parameters
// from it (OpEntryPoint, OpFunction, OpTypeFunction and the parameter types), so arguments are
// checked against the signature the image really declares. A launch runs the host build of the
// CTS kernel of the same name (POLYHAL_ZE_DOUBLE_KERNELS, the CPU backend's cts_kernels.so),
// whose C signature follows the CTS convention: the kernel's parameters without its trailing
// `local` one, which becomes the block's shared memory.
//
// Rules: every argument is set, at the size the image declares; a pointer argument is null or
// device or host memory of the kernel's context; a kernel may reach
// memory through pointers stored in memory only with zeKernelSetIndirectAccess, and since a
// polyhal kernel may do so with any allocation (as a CUDA kernel may), every launched kernel
// must have declared indirect access to device and host memory; a pointer into an allocation
// above 4 GB needs a module built with -ze-opt-greater-than-4GB-buffer-required.
#include <dlfcn.h>

#include <polyhal/cpu_kernel.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "driver_double.hpp"
#include "entries.hpp"

namespace zedouble {
namespace {

using Parameter = _ze_module_handle_t::Parameter;

constexpr uint32_t kSpirvMagic = 0x07230203u;
// The build option without which a kernel addresses buffers of at most 4 GB.
constexpr const char* kLargeBuffers = "-ze-opt-greater-than-4GB-buffer-required";

// SPIR-V opcodes and operands the parser reads.
enum : uint32_t {
    kOpEntryPoint = 15,
    kOpTypeInt = 21,
    kOpTypeFloat = 22,
    kOpTypeVector = 23,
    kOpTypePointer = 32,
    kOpTypeFunction = 33,
    kOpFunction = 54,
    kExecutionModelKernel = 6,
    kStorageClassWorkgroup = 4,
};

// The kernels of a SPIR-V image with their parameters, or false when the image is not valid
// SPIR-V or declares a parameter type the double does not know.
bool parseSpirv(const uint8_t* bytes, size_t size,
                std::map<std::string, std::vector<Parameter>>* kernels, std::string* error) {
    if (size < 20 || size % 4 != 0) {
        *error = "not a SPIR-V module (too short, or not whole words)";
        return false;
    }
    std::vector<uint32_t> words(size / 4);
    std::memcpy(words.data(), bytes, size);
    if (words[0] != kSpirvMagic) {
        if (__builtin_bswap32(words[0]) != kSpirvMagic) {
            *error = "not a SPIR-V module (no magic number)";
            return false;
        }
        for (uint32_t& word : words) word = __builtin_bswap32(word);
    }
    std::map<uint32_t, std::string> entryPoints;  // function id -> name
    std::map<uint32_t, Parameter> types;
    std::map<uint32_t, std::vector<uint32_t>> functionTypes;  // id -> parameter type ids
    std::map<uint32_t, uint32_t> functions;                   // function id -> function type
    for (size_t at = 5; at < words.size();) {
        const uint32_t count = words[at] >> 16;
        const uint32_t opcode = words[at] & 0xffff;
        if (count == 0 || at + count > words.size()) {
            *error = "malformed SPIR-V instruction stream";
            return false;
        }
        const uint32_t* operand = &words[at + 1];
        switch (opcode) {
        case kOpEntryPoint:
            if (operand[0] == kExecutionModelKernel) {
                entryPoints[operand[1]] = reinterpret_cast<const char*>(&operand[2]);
            }
            break;
        case kOpTypeInt:
        case kOpTypeFloat: types[operand[0]] = Parameter{operand[1] / 8, false, false}; break;
        case kOpTypeVector:
            if (types.count(operand[1]) != 0) {
                const uint32_t lanes = operand[2] == 3 ? 4 : operand[2];
                types[operand[0]] = Parameter{types[operand[1]].size * lanes, false, false};
            }
            break;
        case kOpTypePointer: {
            const bool local = operand[1] == kStorageClassWorkgroup;
            types[operand[0]] = Parameter{8, !local, local};
            break;
        }
        case kOpTypeFunction:
            functionTypes[operand[0]].assign(operand + 2, operand + count - 1);
            break;
        case kOpFunction: functions[operand[1]] = operand[3]; break;
        default: break;
        }
        at += count;
    }
    for (const auto& [id, name] : entryPoints) {
        std::vector<Parameter>& parameters = (*kernels)[name];
        for (uint32_t type : functionTypes[functions[id]]) {
            const auto known = types.find(type);
            if (known == types.end()) {
                *error = "kernel '" + name + "' has a parameter of a type the double cannot size";
                return false;
            }
            parameters.push_back(known->second);
        }
    }
    return true;
}

void* hostKernels() {
    static void* const library = [] {
        const char* path = std::getenv("POLYHAL_ZE_DOUBLE_KERNELS");
        return path == nullptr ? nullptr : dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }();
    return library;
}

// The host build of CTS kernel `name`, or null.
halCpuKernelFn findHostKernel(const std::string& name) {
    void* library = hostKernels();
    return library == nullptr ? nullptr
                              : reinterpret_cast<halCpuKernelFn>(dlsym(library, name.c_str()));
}

ze_module_build_log_handle_t makeLog(std::string text) {
    auto* log = new _ze_module_build_log_handle_t{std::move(text)};
    addHandle(log, Kind::BuildLog);
    return log;
}

}  // namespace

ze_result_t ZE_APICALL moduleCreate(ze_context_handle_t context, ze_device_handle_t device,
                                    const ze_module_desc_t* desc, ze_module_handle_t* module,
                                    ze_module_build_log_handle_t* buildLog) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeModuleCreate");
    if (device->driver != context->driver) {
        breach("zeModuleCreate: device %p is not a device of context %p",
               static_cast<void*>(device), static_cast<void*>(context));
    }
    if (buildLog != nullptr) *buildLog = nullptr;
    if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV) {
        if (buildLog != nullptr) *buildLog = makeLog("the driver double builds SPIR-V only");
        return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    auto created = std::make_unique<_ze_module_handle_t>();
    std::string error;
    if (!parseSpirv(desc->pInputModule, desc->inputSize, &created->kernels, &error)) {
        if (buildLog != nullptr) *buildLog = makeLog(error);
        return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    }
    created->context = context;
    created->device = device;
    created->image.assign(desc->pInputModule, desc->pInputModule + desc->inputSize);
    created->buildFlags = desc->pBuildFlags != nullptr ? desc->pBuildFlags : "";
    if (buildLog != nullptr) *buildLog = makeLog("");
    addHandle(created.get(), Kind::Module);
    *module = created.release();
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL moduleDestroy(ze_module_handle_t module) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(module, Kind::Module, "zeModuleDestroy");
    if (module->liveKernels > 0) {
        breach("zeModuleDestroy: module %p still has %d kernel(s)", static_cast<void*>(module),
               module->liveKernels);
    }
    removeHandle(module);
    delete module;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL moduleBuildLogGetString(ze_module_build_log_handle_t log, size_t* size,
                                               char* text) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(log, Kind::BuildLog, "zeModuleBuildLogGetString");
    if (text == nullptr) {
        *size = log->text.size() + 1;
        return ZE_RESULT_SUCCESS;
    }
    if (*size < log->text.size() + 1) return ZE_RESULT_ERROR_INVALID_SIZE;
    std::memcpy(text, log->text.c_str(), log->text.size() + 1);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL moduleBuildLogDestroy(ze_module_build_log_handle_t log) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(log, Kind::BuildLog, "zeModuleBuildLogDestroy");
    removeHandle(log);
    delete log;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL kernelCreate(ze_module_handle_t module, const ze_kernel_desc_t* desc,
                                    ze_kernel_handle_t* kernel) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(module, Kind::Module, "zeKernelCreate");
    const auto found = module->kernels.find(desc->pKernelName);
    if (found == module->kernels.end()) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    auto* created = new _ze_kernel_handle_t;
    created->module = module;
    created->name = found->first;
    created->parameters = &found->second;
    created->values.resize(found->second.size());
    created->set.resize(found->second.size(), false);
    ++module->liveKernels;
    addHandle(created, Kind::Kernel);
    *kernel = created;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL kernelDestroy(ze_kernel_handle_t kernel) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(kernel, Kind::Kernel, "zeKernelDestroy");
    --kernel->module->liveKernels;
    removeHandle(kernel);
    delete kernel;
    return ZE_RESULT_SUCCESS;
}

constexpr uint32_t kSubgroupSize = 8;

// The most work-items a group of `kernel` may have: the device's limit, but for block_sum, which
// stands for a kernel whose registers allow fewer (its conformance launches use 128).
uint32_t kernelMaxGroupSize(const _ze_kernel_handle_t& kernel) {
    return kernel.name == "block_sum" ? 256 : maxGroupSize();
}

ze_result_t ZE_APICALL kernelGetProperties(ze_kernel_handle_t kernel,
                                           ze_kernel_properties_t* properties) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(kernel, Kind::Kernel, "zeKernelGetProperties");
    const ze_structure_type_t stype = properties->stype;
    void* const next = properties->pNext;
    *properties = ze_kernel_properties_t{};
    properties->stype = stype;
    properties->pNext = next;
    properties->numKernelArgs = static_cast<uint32_t>(kernel->parameters->size());
    properties->maxSubgroupSize = kSubgroupSize;
    properties->maxNumSubgroups = kernelMaxGroupSize(*kernel) / kSubgroupSize;
    return ZE_RESULT_SUCCESS;
}

// As the driver's: a group no larger than the kernel's own limit.
ze_result_t ZE_APICALL kernelSetGroupSize(ze_kernel_handle_t kernel, uint32_t x, uint32_t y,
                                          uint32_t z) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(kernel, Kind::Kernel, "zeKernelSetGroupSize");
    if (x == 0 || y == 0 || z == 0 || uint64_t{x} * y * z > kernelMaxGroupSize(*kernel)) {
        return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    }
    kernel->groupSize[0] = x;
    kernel->groupSize[1] = y;
    kernel->groupSize[2] = z;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL kernelSetArgumentValue(ze_kernel_handle_t kernel, uint32_t index,
                                              size_t size, const void* value) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(kernel, Kind::Kernel, "zeKernelSetArgumentValue");
    if (index >= kernel->parameters->size()) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    const Parameter& parameter = (*kernel->parameters)[index];
    if (parameter.local) {
        if (value != nullptr) {
            breach(
                "zeKernelSetArgumentValue: argument %u of kernel '%s' is a local pointer, "
                "set by its size with a null value",
                index, kernel->name.c_str());
        }
        if (size == 0 || size > maxSharedLocalMemory()) {
            return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
        }
        kernel->values[index].assign(size, 0);
    } else {
        if (size != parameter.size) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
        if (value == nullptr && !parameter.pointer) {
            breach(
                "zeKernelSetArgumentValue: argument %u of kernel '%s' is a %u-byte value, "
                "given no value",
                index, kernel->name.c_str(), parameter.size);
        }
        const uint8_t zero[8] = {};
        const auto* bytes = static_cast<const uint8_t*>(value != nullptr ? value : zero);
        kernel->values[index].assign(bytes, bytes + size);
    }
    kernel->set[index] = true;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL kernelSetIndirectAccess(ze_kernel_handle_t kernel,
                                               ze_kernel_indirect_access_flags_t flags) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(kernel, Kind::Kernel, "zeKernelSetIndirectAccess");
    kernel->indirectAccess = flags;
    return ZE_RESULT_SUCCESS;
}

std::function<void()> captureLaunch(ze_command_list_handle_t list, ze_kernel_handle_t kernel,
                                    const ze_group_count_t& groups, std::vector<uintptr_t>* uses) {
    constexpr const char* kCall = "zeCommandListAppendLaunchKernel";
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(kernel, Kind::Kernel, kCall);
    const char* name = kernel->name.c_str();
    if (kernel->module->context != list->context) {
        breach("%s: kernel '%s' belongs to context %p, the command list to context %p", kCall, name,
               static_cast<void*>(kernel->module->context), static_cast<void*>(list->context));
    }
    if (kernel->module->device != list->device) {
        breach("%s: kernel '%s' was built for device %p, launched on device %p", kCall, name,
               static_cast<void*>(kernel->module->device), static_cast<void*>(list->device));
    }
    constexpr ze_kernel_indirect_access_flags_t kNeeded =
        ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE | ZE_KERNEL_INDIRECT_ACCESS_FLAG_HOST;
    if ((kernel->indirectAccess & kNeeded) != kNeeded) {
        breach(
            "%s: kernel '%s' is launched without zeKernelSetIndirectAccess(DEVICE | HOST): "
            "memory it reaches through pointers stored in memory (not in its arguments) "
            "need not be resident",
            kCall, name);
    }
    if (kernel->groupSize[0] == 0) {
        breach("%s: kernel '%s' is launched before zeKernelSetGroupSize", kCall, name);
    }
    // The arguments as the host build takes them: global pointers translated to the double's
    // aliases, the local parameter turned into shared memory.
    auto values = std::make_shared<std::vector<std::vector<uint8_t>>>();
    size_t sharedBytes = 0;
    for (size_t index = 0; index < kernel->parameters->size(); ++index) {
        const Parameter& parameter = (*kernel->parameters)[index];
        if (!kernel->set[index]) {
            breach("%s: argument %zu of kernel '%s' was never set", kCall, index, name);
        }
        std::vector<uint8_t> value = kernel->values[index];
        if (parameter.local) {
            sharedBytes = value.size();
            continue;
        }
        if (parameter.pointer) {
            void* pointer = nullptr;
            std::memcpy(&pointer, value.data(), sizeof pointer);
            if (pointer != nullptr) {
                const Allocation* allocation = findAllocation(pointer, 1, kCall);
                // Every device of the double reaches its peers' memory (zeDeviceCanAccessPeer).
                if (allocation == nullptr || allocation->context != list->context) {
                    breach(
                        "%s: argument %zu of kernel '%s' is %p, which is not device or host "
                        "memory of the launch's context",
                        kCall, index, name, pointer);
                }
                constexpr size_t k4GiB = size_t{4} << 30;
                if (allocation->size > k4GiB &&
                    kernel->module->buildFlags.find(kLargeBuffers) == std::string::npos) {
                    breach(
                        "%s: argument %zu of kernel '%s' points into an allocation of %zu "
                        "bytes, but its module was not built with %s: the kernel can "
                        "address only 4 GB of it",
                        kCall, index, name, allocation->size, kLargeBuffers);
                }
                uses->push_back(reinterpret_cast<uintptr_t>(allocation->base));
                void* alias = allocation->alias + (static_cast<char*>(pointer) - allocation->base);
                std::memcpy(value.data(), &alias, sizeof alias);
            }
        }
        values->push_back(std::move(value));
    }
    const halCpuKernelFn host = findHostKernel(kernel->name);
    if (host == nullptr) {
        std::fprintf(stderr, "Level Zero driver double: kernel '%s' has no host build to run\n",
                     name);
        return nullptr;
    }
    const halDim3 block{kernel->groupSize[0], kernel->groupSize[1], kernel->groupSize[2]};
    const halDim3 grid{groups.groupCountX, groups.groupCountY, groups.groupCountZ};
    const std::string kernelName = kernel->name;
    return [values, sharedBytes, host, block, grid, kernelName] {
        std::vector<const void*> args;
        std::vector<size_t> sizes;
        for (const auto& value : *values) {
            args.push_back(value.data());
            sizes.push_back(value.size());
        }
        // 64-byte aligned, as the CPU backend gives its kernels.
        std::vector<uint8_t> shared(sharedBytes + 64);
        void* sharedMemory = nullptr;
        if (sharedBytes > 0) {
            const auto address = reinterpret_cast<uintptr_t>(shared.data());
            sharedMemory = shared.data() + ((64 - address % 64) % 64);
        }
        halCpuKernelContext context{};
        context.size = sizeof context;
        context.gridDim = grid;
        context.blockDim = block;
        context.sharedMemory = sharedMemory;
        context.sharedMemoryBytes = sharedBytes;
        context.args = args.data();
        context.argSizes = sizes.data();
        context.numArgs = static_cast<uint32_t>(args.size());
        for (uint32_t z = 0; z < grid.z; ++z) {
            for (uint32_t y = 0; y < grid.y; ++y) {
                for (uint32_t x = 0; x < grid.x; ++x) {
                    context.blockIdx = halDim3{x, y, z};
                    const int status = host(&context);
                    if (status != 0) {
                        std::fprintf(stderr,
                                     "Level Zero driver double: kernel '%s' failed (%d): the "
                                     "device is lost\n",
                                     kernelName.c_str(), status);
                        std::lock_guard<std::mutex> lost(state().mutex);
                        state().deviceLost = true;
                        state().eventsChanged.notify_all();
                        return;
                    }
                }
            }
        }
    };
}

}  // namespace zedouble
