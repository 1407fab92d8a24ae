// Platform entries: loading the vendor runtime and counting its devices.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_PLATFORM_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_PLATFORM_HPP_

#include <string>

#include "gpu_common/engine/vendor_call.hpp"
#include "support/dynamic_library.hpp"

namespace polyhal::gpu {

// Opens the vendor library, resolves the symbol table and initialises the runtime. Without the
// library, a symbol, a working driver or a device: HAL_ERROR_NO_DEVICE with the reason. Not
// noexcept: the library's name and the loader's message are std::strings, and the table turns a
// failed allocation into HAL_ERROR_OUT_OF_MEMORY.
template <class Api>
halError initialize() {
    static DynamicLibrary library;
    std::string error;
    library = DynamicLibrary::openFirst(Api::kLibraries,
                                        sizeof Api::kLibraries / sizeof *Api::kLibraries, &error);
    if (!library) {
        return plugin::fail(HAL_ERROR_NO_DEVICE, "%s was not found: %s", Api::kLibraryDescription,
                            error.c_str());
    }
    library.keepLoaded();
    if (const char* missing = Api::symbols.resolve(library)) {
        return plugin::fail(HAL_ERROR_NO_DEVICE,
                            "%s %s lacks %s: it is older than this backend needs",
                            Api::kLibraryDescription, library.name().c_str(), missing);
    }
    const auto& vendor = Api::symbols;
    // Whatever stops the runtime from starting (no device, no kernel driver, a stub library),
    // the backend has no usable device; the vendor's message says which.
    typename Api::Result result = vendor.init.address(0);
    if (result != Api::kSuccess) {
        return failCall<Api>(HAL_ERROR_NO_DEVICE, result, vendor.init.name);
    }
    int count = 0;
    result = vendor.deviceGetCount.address(&count);
    if (result != Api::kSuccess) {
        return failCall<Api>(HAL_ERROR_NO_DEVICE, result, vendor.deviceGetCount.name);
    }
    if (count == 0) {
        return plugin::fail(HAL_ERROR_NO_DEVICE, "%s: no device", vendor.deviceGetCount.name);
    }
    plugin::log(HAL_LOG_INFO, "%s: %d device(s)", library.name().c_str(), count);
    return HAL_SUCCESS;
}

template <class Api>
halError deviceGetCount(int* count) noexcept {
    return call<Api>(Api::symbols.deviceGetCount, count);
}

// Answered from the Api's constants, without touching the vendor library.
template <class Api>
halError backendGetInfo(halPluginBackendInfo* info) noexcept {
    return plugin::describeBackend(info, Api::kSelectionPriority, Api::kDLPackDeviceType,
                                   Api::kModuleImageKinds);
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_PLATFORM_HPP_
