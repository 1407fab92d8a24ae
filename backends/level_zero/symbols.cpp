#include "symbols.h"

#include <dlfcn.h>

#include <polyhal/plugin_support.hpp>

namespace polyhal::level_zero {

Symbols ze;

namespace {
constexpr const char* kLoaderName = "libze_loader.so.1";
}  // namespace

halError loadSymbols() {
    void* loader = dlopen(kLoaderName, RTLD_NOW | RTLD_LOCAL);
    if (loader == nullptr) {
        return plugin::fail(HAL_ERROR_NO_DEVICE,
                            "no Level Zero driver was found: cannot load %s (%s)", kLoaderName,
                            dlerror());
    }
    Symbols resolved;
#define POLYHAL_LEVEL_ZERO_RESOLVE(name)                                                       \
    resolved.name = reinterpret_cast<decltype(resolved.name)>(dlsym(loader, #name));          \
    if (resolved.name == nullptr) {                                                            \
        const halError missing = plugin::fail(                                                 \
            HAL_ERROR_NO_DEVICE, "no usable Level Zero loader: %s lacks %s (%s), so it "       \
            "predates the Level Zero 1.4 API", kLoaderName, #name, dlerror());                \
        dlclose(loader);                                                                       \
        return missing;                                                                        \
    }
    POLYHAL_LEVEL_ZERO_SYMBOLS(POLYHAL_LEVEL_ZERO_RESOLVE)
#undef POLYHAL_LEVEL_ZERO_RESOLVE
    ze = resolved;
    return HAL_SUCCESS;
}

}  // namespace polyhal::level_zero
