// Loading the Level Zero loader and resolving the functions of symbols.hpp.
#include "symbols.hpp"

#include <polyhal/plugin_support.hpp>

#include <string>

namespace polyhal::level_zero {

Symbols ze;

namespace {
constexpr const char* kLoaderName = "libze_loader.so.1";
}  // namespace

halError loadSymbols() {
    std::string error;
    DynamicLibrary loader = DynamicLibrary::open(kLoaderName, &error);
    if (!loader) {
        return plugin::fail(HAL_ERROR_NO_DEVICE,
                            "no Level Zero driver was found: cannot load %s (%s)", kLoaderName,
                            error.c_str());
    }
    Symbols resolved;
    if (const char* missing = resolved.resolve(loader)) {
        return plugin::fail(HAL_ERROR_NO_DEVICE,
                            "no usable Level Zero loader: %s lacks %s, so it predates the Level "
                            "Zero 1.4 API",
                            kLoaderName, missing);
    }
    // The driver tears itself down at exit; unloading it earlier would leave `ze` dangling.
    loader.keepLoaded();
    ze = resolved;
    return HAL_SUCCESS;
}

}  // namespace polyhal::level_zero
