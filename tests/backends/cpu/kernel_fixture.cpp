#include "kernel_fixture.hpp"

#include <catch2/catch.hpp>

#include "backend_fixture.hpp"

namespace cpu_tests {

const std::vector<unsigned char>& testKernelImage() {
    static const std::vector<unsigned char> image = readFile(CPU_TEST_KERNELS_PATH);
    return image;
}

KernelModule::KernelModule() {
    const std::vector<unsigned char>& image = testKernelImage();
    const halError status =
        backend().moduleLoadData(device0(), image.data(), image.size(), &module_);
    INFO(lastError());
    REQUIRE(status == HAL_SUCCESS);
}

KernelModule::~KernelModule() {
    // Kernels launched from the module must have finished before it goes.
    backend().deviceSynchronize(device0());
    backend().moduleUnload(module_);
}

halPluginFunction KernelModule::function(const char* name) const {
    halPluginFunction function = nullptr;
    const halError status = backend().moduleGetFunction(module_, name, &function);
    INFO(lastError());
    REQUIRE(status == HAL_SUCCESS);
    return function;
}

}  // namespace cpu_tests
