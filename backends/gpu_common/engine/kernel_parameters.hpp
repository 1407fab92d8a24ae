// The parameter sizes a kernel declares, where its vendor can say (CUDA: cuFuncGetParamInfo; HIP:
// its code object's metadata), and the check of a launch's arguments against them. Both vendors
// read kernelParams[i] for each parameter the kernel declares, at its declared size, whatever the
// caller passed: a launch that does not match is refused before it reaches them.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_ENGINE_KERNEL_PARAMETERS_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_ENGINE_KERNEL_PARAMETERS_HPP_

#include <polyhal/plugin_support.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace polyhal::gpu {

class DeclaredParameters {
  public:
    // Whether the vendor said; a kernel it could not describe takes any arguments.
    bool known() const noexcept { return sizes_ != nullptr; }

    // Room for `count` sizes, each then set with setSize(); the parameters are known from here.
    halError declare(uint32_t count) noexcept {
        sizes_.reset(new (std::nothrow) size_t[count > 0 ? count : 1]);
        if (sizes_ == nullptr) {
            return plugin::fail(HAL_ERROR_OUT_OF_MEMORY,
                                "no host memory for a kernel's %u parameters", count);
        }
        count_ = count;
        return HAL_SUCCESS;
    }
    size_t* size(uint32_t index) noexcept { return &sizes_[index]; }

    halError check(const halKernelArg* args, uint32_t numArgs) const noexcept {
        if (!known()) return HAL_SUCCESS;
        if (count_ != numArgs) {
            return plugin::fail(HAL_ERROR_INVALID_VALUE,
                                "the kernel has %u parameters, %u arguments were given", count_,
                                numArgs);
        }
        for (uint32_t i = 0; i < numArgs; ++i) {
            if (sizes_[i] != args[i].size) {
                return plugin::fail(
                    HAL_ERROR_INVALID_VALUE,
                    "argument %u is %zu bytes, the kernel's parameter %u is %zu bytes", i,
                    args[i].size, i, sizes_[i]);
            }
        }
        return HAL_SUCCESS;
    }

  private:
    std::unique_ptr<size_t[]> sizes_;
    uint32_t count_ = 0;
};

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_ENGINE_KERNEL_PARAMETERS_HPP_
