// Modules: loading from files and memory, kernel lookup, unloading, handle validation.
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kernels.hpp"

namespace {

const char kGarbage[] = "this is not a kernel image \x01\x02\x03\x7f of any backend";

// The image holding fill_u32, or "" after printing why the test is skipped.
std::string fillImage() {
    if (cts::lacksCapability(HAL_DEVICE_CAP_KERNELS, "HAL_DEVICE_CAP_KERNELS")) return {};
    std::string searched;
    const std::string image = cts::findKernelImage("fill_u32", &searched);
    if (image.empty()) cts::skip("no CTS kernel image for this backend (" + searched + ")");
    return image;
}

std::vector<char> readFile(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(file), {});
}

}  // namespace

TEST_CASE("a backend without kernels refuses modules", "[module]") {
    if ((cts::deviceProperties().capabilities & HAL_DEVICE_CAP_KERNELS) != 0) return;
    halModule module = nullptr;
    CHECK(halModuleLoadData(&module, kGarbage, sizeof kGarbage) == HAL_ERROR_NOT_SUPPORTED);
}

TEST_CASE("module loading validates its arguments", "[module][errors]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_KERNELS);
    halModule module = nullptr;
    CHECK(halModuleLoadData(nullptr, kGarbage, sizeof kGarbage) == HAL_ERROR_INVALID_VALUE);
    CHECK(halModuleLoadData(&module, nullptr, 16) == HAL_ERROR_INVALID_VALUE);
    CHECK(halModuleLoadData(&module, kGarbage, 0) == HAL_ERROR_INVALID_VALUE);
    CHECK(halModuleLoadFile(&module, nullptr) == HAL_ERROR_INVALID_VALUE);
    CHECK(halModuleLoadFile(nullptr, "/nonexistent") == HAL_ERROR_INVALID_VALUE);
    CHECK(module == nullptr);
}

TEST_CASE("a module file that cannot be read is refused with its path", "[module][errors]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_KERNELS);
    const char* path = "/nonexistent/polyhal-cts/missing-module.bin";
    halModule module = nullptr;
    CHECK(halModuleLoadFile(&module, path) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(std::string(halGetLastErrorMessage()), Catch::Contains(path));
}

TEST_CASE("a garbage image is INVALID_IMAGE with a reason", "[module][errors]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_KERNELS);
    halModule module = nullptr;
    CHECK(halModuleLoadData(&module, kGarbage, sizeof kGarbage) == HAL_ERROR_INVALID_IMAGE);
    CHECK(std::string(halGetLastErrorMessage()).size() > 0);
    CHECK(module == nullptr);
}

TEST_CASE("a module loads from a file and from memory", "[module]") {
    const std::string image = fillImage();
    if (image.empty()) return;
    const bool fromMemory = GENERATE(false, true);
    INFO((fromMemory ? "halModuleLoadData" : "halModuleLoadFile") << " " << image);
    cts::Module module;
    if (fromMemory) {
        std::vector<char> bytes = readFile(image);
        REQUIRE_FALSE(bytes.empty());
        HAL_REQUIRE_OK(halModuleLoadData(module.out(), bytes.data(), bytes.size()));
        // The image was copied: the caller's buffer may go away.
        std::fill(bytes.begin(), bytes.end(), 0);
    } else {
        HAL_REQUIRE_OK(halModuleLoadFile(module.out(), image.c_str()));
    }
    halFunction function = nullptr;
    HAL_REQUIRE_OK(halModuleGetFunction(&function, module.get(), "fill_u32"));
    REQUIRE(function != nullptr);

    constexpr uint32_t kCount = 100;
    cts::DeviceMemory out(kCount * sizeof(uint32_t));
    void* outPtr = out.get();
    const uint32_t value = 42, n = kCount;
    HAL_REQUIRE_OK(
        cts::launch1d(function, n, 32, {cts::arg(outPtr), cts::arg(value), cts::arg(n)}, nullptr));
    std::vector<uint32_t> result(kCount);
    HAL_REQUIRE_OK(
        halMemcpy(result.data(), out.size(), out.get(), out.size(), HAL_MEMCPY_DEVICE_TO_HOST));
    CHECK(result == std::vector<uint32_t>(kCount, 42));
}

TEST_CASE("an unknown kernel name is NOT_FOUND", "[module][errors]") {
    const std::string image = fillImage();
    if (image.empty()) return;
    cts::Module module;
    HAL_REQUIRE_OK(halModuleLoadFile(module.out(), image.c_str()));
    halFunction function = nullptr;
    CHECK(halModuleGetFunction(&function, module.get(), "no_such_kernel_xyz") ==
          HAL_ERROR_NOT_FOUND);
    CHECK_THAT(std::string(halGetLastErrorMessage()), Catch::Contains("no_such_kernel_xyz"));
    CHECK(halModuleGetFunction(nullptr, module.get(), "fill_u32") == HAL_ERROR_INVALID_VALUE);
    CHECK(halModuleGetFunction(&function, module.get(), nullptr) == HAL_ERROR_INVALID_VALUE);
    CHECK(function == nullptr);
}

TEST_CASE("an unloaded module and its functions are invalid handles", "[module][handles]") {
    const std::string image = fillImage();
    if (image.empty()) return;
    halModule module = nullptr;
    HAL_REQUIRE_OK(halModuleLoadFile(&module, image.c_str()));
    halFunction function = nullptr;
    HAL_REQUIRE_OK(halModuleGetFunction(&function, module, "fill_u32"));
    HAL_REQUIRE_OK(halModuleUnload(module));

    CHECK(halModuleUnload(module) == HAL_ERROR_INVALID_HANDLE);
    halFunction again = nullptr;
    CHECK(halModuleGetFunction(&again, module, "fill_u32") == HAL_ERROR_INVALID_HANDLE);
    cts::DeviceMemory out(64);
    void* outPtr = out.get();
    uint32_t value = 1, n = 16;
    const halKernelArg args[] = {cts::arg(outPtr), cts::arg(value), cts::arg(n)};
    CHECK(halLaunchKernel(function, {1, 1, 1}, {16, 1, 1}, 0, args, 3, nullptr) ==
          HAL_ERROR_INVALID_HANDLE);
}

TEST_CASE("NULL and foreign module handles are refused", "[module][handles]") {
    double local[4] = {};
    const halModule foreign = reinterpret_cast<halModule>(local);
    halFunction function = nullptr;
    for (const halModule bad : {static_cast<halModule>(nullptr), foreign}) {
        CHECK(halModuleUnload(bad) == HAL_ERROR_INVALID_HANDLE);
        CHECK(halModuleGetFunction(&function, bad, "fill_u32") == HAL_ERROR_INVALID_HANDLE);
    }
    const halFunction foreignFunction = reinterpret_cast<halFunction>(local);
    uint32_t value = 0;
    const halKernelArg args[] = {cts::arg(value)};
    for (const halFunction bad : {static_cast<halFunction>(nullptr), foreignFunction}) {
        CHECK(halLaunchKernel(bad, {1, 1, 1}, {1, 1, 1}, 0, args, 1, nullptr) ==
              HAL_ERROR_INVALID_HANDLE);
    }
}
