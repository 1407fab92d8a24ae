// Module entries: loading images, looking kernels up and launching them.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_MODULE_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_MODULE_HPP_

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>

#include "gpu_common/engine/current_device.hpp"
#include "gpu_common/engine/objects.hpp"
#include "gpu_common/engine/vendor_call.hpp"

namespace polyhal::gpu {

// Loads PTX text, a cubin or a fatbin (CUDA), or a code object (HIP). A rejected image is
// HAL_ERROR_INVALID_IMAGE with the vendor's reason and, where the vendor gives one, its JIT log.
template <class Api>
halError moduleLoadData(halPluginDevice deviceHandle, const void* image, size_t size,
                        halPluginModule* handle) noexcept {
    const Device<Api>* device = &plugin::fromHandle<Device<Api>>(deviceHandle);
    const auto& vendor = Api::symbols;
    auto module = std::unique_ptr<Module<Api>>(new (std::nothrow) Module<Api>(device));
    if (module == nullptr) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "no host memory for a module");
    }
    // The vendor's loader takes no size and trusts the image's headers: what they name must lie
    // inside it (Api::imageProblem).
    if (const char* problem = Api::imageProblem(static_cast<const unsigned char*>(image), size)) {
        return plugin::fail(HAL_ERROR_INVALID_IMAGE, "a %zu-byte %s image: %s", size, Api::kName,
                            problem);
    }
    if (halError error =
            Api::describeModule(static_cast<const unsigned char*>(image), size, &module->info)) {
        return error;
    }
    // The vendor's loader takes no size and reads text images up to their NUL, so an image
    // that does not end in one is loaded from a terminated copy. Binary images carry their own
    // size and are unaffected by the extra byte.
    std::unique_ptr<char[]> terminated;
    if (static_cast<const char*>(image)[size - 1] != '\0') {
        terminated.reset(new (std::nothrow) char[size + 1]);
        if (terminated == nullptr) {
            return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "no host memory to copy a %zu-byte image",
                                size);
        }
        std::memcpy(terminated.get(), image, size);
        terminated[size] = '\0';
        image = terminated.get();
    }
    const CurrentDevice<Api> current(*device);
    if (halError error = current.error()) return error;
    char log[4096] = "";
    typename Api::JitOption options[] = {Api::kJitErrorLogBuffer, Api::kJitErrorLogBufferSize};
    void* values[] = {log, reinterpret_cast<void*>(uintptr_t{sizeof log})};
    const typename Api::Result result = vendor.moduleLoadDataEx.address(
        &module->native, image, sizeof options / sizeof *options, options, values);
    if (result != Api::kSuccess) {
        // The arguments were checked by the core, so an invalid value can only be the image.
        halError code = Api::toHalError(result);
        if (code == HAL_ERROR_INVALID_VALUE) code = HAL_ERROR_INVALID_IMAGE;
        return failCall<Api>(code, result, vendor.moduleLoadDataEx.name,
                             log[0] != '\0' ? log : nullptr);
    }
    *handle = plugin::toHandle(module.release());
    return HAL_SUCCESS;
}

// The vendor unloads a module from the current context (CUDA), so a module whose device cannot
// be made current stays loaded until its context goes, and the error says why.
template <class Api>
halError moduleUnload(halPluginModule handle) noexcept {
    std::unique_ptr<Module<Api>> module(&plugin::fromHandle<Module<Api>>(handle));
    const CurrentDevice<Api> current(*module->device);
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.moduleUnload, module->native);
}

// The function, with what its launches check (Api::describeKernel), goes with its module.
template <class Api>
halError moduleGetFunction(halPluginModule handle, const char* name,
                           halPluginFunction* function) noexcept {
    Module<Api>& module = plugin::fromHandle<Module<Api>>(handle);
    const CurrentDevice<Api> current(*module.device);
    if (halError error = current.error()) return error;
    const auto& getFunction = Api::symbols.moduleGetFunction;
    typename Api::Function native{};
    const typename Api::Result result = getFunction.address(&native, module.native, name);
    if (result != Api::kSuccess) {
        char detail[320];
        std::snprintf(detail, sizeof detail, "no kernel '%.256s' in the module", name);
        return failCall<Api>(Api::toHalError(result), result, getFunction.name, detail);
    }
    auto object =
        std::unique_ptr<Function<Api>>(new (std::nothrow) Function<Api>{native, {}, nullptr});
    if (object == nullptr) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "no host memory for kernel '%.256s'", name);
    }
    if (halError error = Api::describeKernel(module.info, name, native, &object->info)) {
        return error;
    }
    *function = plugin::toHandle(object.get());
    module.add(object.release());
    return HAL_SUCCESS;
}

// The vendor's kernelParams for a launch: a pointer to each argument's value, where the caller
// keeps it (the vendor copies the values at the launch, and at a kernel node's creation).
class KernelParams {
  public:
    KernelParams() = default;
    KernelParams(const KernelParams&) = delete;
    KernelParams& operator=(const KernelParams&) = delete;

    halError init(const halKernelArg* args, uint32_t numArgs) noexcept {
        if (numArgs > kInlineArgs) {
            heap_.reset(new (std::nothrow) void*[numArgs]);
            if (heap_ == nullptr) {
                return plugin::fail(HAL_ERROR_OUT_OF_MEMORY,
                                    "no host memory for %u kernel arguments", numArgs);
            }
            params_ = heap_.get();
        }
        for (uint32_t i = 0; i < numArgs; ++i) params_[i] = const_cast<void*>(args[i].value);
        numArgs_ = numArgs;
        return HAL_SUCCESS;
    }
    void** get() noexcept { return numArgs_ > 0 ? params_ : nullptr; }

  private:
    static constexpr uint32_t kInlineArgs = 32;
    void* inline_[kInlineArgs];
    std::unique_ptr<void*[]> heap_;
    void** params_ = inline_;
    uint32_t numArgs_ = 0;
};

// It reads each parameter at the size the kernel declares, as many as it declares, so the
// arguments are checked against the kernel first where the vendor can say (Api::checkArguments),
// from what was read when the kernel was looked up.
template <class Api>
halError checkLaunch(Function<Api>& function, size_t dynamicSharedBytes, const halKernelArg* args,
                     uint32_t numArgs) noexcept {
    if (halError error = Api::checkArguments(function.info, args, numArgs)) return error;
    return Api::allowDynamicSharedMemory(function.native, function.info, dynamicSharedBytes);
}

template <class Api>
halError launchKernel(halPluginStream streamHandle, halPluginFunction functionHandle, halDim3 grid,
                      halDim3 block, size_t dynamicSharedBytes, const halKernelArg* args,
                      uint32_t numArgs) noexcept {
    const Stream<Api>& stream = plugin::fromHandle<Stream<Api>>(streamHandle);
    Function<Api>& function = plugin::fromHandle<Function<Api>>(functionHandle);
    KernelParams params;
    if (halError error = params.init(args, numArgs)) return error;
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    if (halError error = checkLaunch<Api>(function, dynamicSharedBytes, args, numArgs)) {
        return error;
    }
    return call<Api>(Api::symbols.launchKernel, function.native, grid.x, grid.y, grid.z, block.x,
                     block.y, block.z, static_cast<unsigned>(dynamicSharedBytes), stream.native,
                     params.get(), static_cast<void**>(nullptr));
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_MODULE_HPP_
