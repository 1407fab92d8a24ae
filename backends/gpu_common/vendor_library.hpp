// The vendor runtime library (libcuda.so.1, libamdhip64.so), opened at run time so that a
// plugin builds and loads on machines without the vendor's driver.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_VENDOR_LIBRARY_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_VENDOR_LIBRARY_HPP_

#include <cstddef>

namespace polyhal::gpu {

// Once opened, the library stays loaded until the process exits: GPU drivers run their own
// teardown at exit, and unloading them while the core may still free memory through the plugin
// would leave dangling function pointers.
class VendorLibrary {
  public:
    // Opens the first of `candidates[0..count)` that loads (RTLD_NOW | RTLD_LOCAL). When none
    // does, returns false and writes each candidate's dlerror() text to `error`.
    bool open(const char* const* candidates, size_t count, char* error, size_t errorSize) noexcept;

    // The address of `name` in the library, or nullptr.
    void* symbol(const char* name) const noexcept;

    // The candidate that was opened.
    const char* name() const noexcept { return name_; }

  private:
    void* handle_ = nullptr;
    const char* name_ = nullptr;
};

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_VENDOR_LIBRARY_HPP_
