#include "gpu_common/vendor_library.hpp"

#include <dlfcn.h>

#include <cstdio>

namespace polyhal::gpu {

bool VendorLibrary::open(const char* const* candidates, size_t count, char* error,
                         size_t errorSize) noexcept {
    size_t written = 0;
    if (errorSize > 0) error[0] = '\0';
    for (size_t i = 0; i < count; ++i) {
        handle_ = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (handle_ != nullptr) {
            name_ = candidates[i];
            return true;
        }
        if (written < errorSize) {
            const int length = std::snprintf(error + written, errorSize - written, "%s%s",
                                             written == 0 ? "" : "; ", dlerror());
            if (length > 0) written += static_cast<size_t>(length);
        }
    }
    return false;
}

void* VendorLibrary::symbol(const char* name) const noexcept { return dlsym(handle_, name); }

}  // namespace polyhal::gpu
