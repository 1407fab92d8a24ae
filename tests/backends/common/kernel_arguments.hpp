// A launch whose arguments do not match the kernel's parameters in number or size is refused
// before it reaches the vendor, which would read each parameter the kernel declares at its
// declared size (CUDA: cuFuncGetParamInfo; HIP: the code object's metadata); a matching launch
// runs. Include after Catch2.
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_KERNEL_ARGUMENTS_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_KERNEL_ARGUMENTS_HPP_

#include <polyhal/hal.h>

#include <cstdint>
#include <string>
#include <vector>

namespace polyhal::doubles {

// `image` holds the conformance kernels (fill_u32(uint32_t* out, uint32_t value, uint32_t n)).
inline void launchArgumentsMustMatchTheKernel(const std::string& image) {
    REQUIRE(halInit() == HAL_SUCCESS);
    REQUIRE(halSetDevice(0) == HAL_SUCCESS);
    halModule module = nullptr;
    halFunction fill = nullptr;
    REQUIRE(halModuleLoadData(&module, image.data(), image.size()) == HAL_SUCCESS);
    REQUIRE(halModuleGetFunction(&fill, module, "fill_u32") == HAL_SUCCESS);
    void* out = nullptr;
    REQUIRE(halMalloc(&out, 64 * sizeof(uint32_t)) == HAL_SUCCESS);
    const uint32_t value = 5;
    const uint64_t wideValue = 5;
    const uint32_t n = 64;
    const halDim3 grid{1, 1, 1};
    const halDim3 block{64, 1, 1};

    const halKernelArg wrongSize[] = {
        {&out, sizeof out}, {&wideValue, sizeof wideValue}, {&n, sizeof n}};
    CHECK(halLaunchKernel(fill, grid, block, 0, wrongSize, 3, nullptr) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("argument 1"));

    const halKernelArg tooMany[] = {
        {&out, sizeof out}, {&value, sizeof value}, {&n, sizeof n}, {&n, sizeof n}};
    CHECK(halLaunchKernel(fill, grid, block, 0, tooMany, 4, nullptr) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("3 parameters"));

    const halKernelArg tooFew[] = {{&out, sizeof out}, {&value, sizeof value}};
    CHECK(halLaunchKernel(fill, grid, block, 0, tooFew, 2, nullptr) == HAL_ERROR_INVALID_VALUE);

    const halKernelArg right[] = {{&out, sizeof out}, {&value, sizeof value}, {&n, sizeof n}};
    REQUIRE(halLaunchKernel(fill, grid, block, 0, right, 3, nullptr) == HAL_SUCCESS);
    std::vector<uint32_t> result(64);
    REQUIRE(halMemcpy(result.data(), 256, out, 256, HAL_MEMCPY_DEVICE_TO_HOST) == HAL_SUCCESS);
    CHECK(result == std::vector<uint32_t>(64, 5));
    REQUIRE(halFree(out) == HAL_SUCCESS);
    REQUIRE(halModuleUnload(module) == HAL_SUCCESS);
}

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_KERNEL_ARGUMENTS_HPP_
