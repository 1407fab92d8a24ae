// Loading modules: OpenCL C source, SPIR-V detection, build failures and kernel lookup.
#include <cstdint>
#include <string>

#include "plugin_fixture.hpp"

using namespace opencl_test;

namespace {

halError load(const std::string& image, halPluginModule* module) {
    return plugin().moduleLoadData(device(), image.data(), image.size(), module);
}

const std::string kSource =
    "kernel void twice(global int* data) {\n"
    "    data[get_global_id(0)] *= 2;\n"
    "}\n";

}  // namespace

TEST_CASE("OpenCL C source loads, with or without a terminating NUL") {
    for (const std::string& image : {kSource, kSource + '\0'}) {
        halPluginModule module = nullptr;
        REQUIRE_OK(load(image, &module));
        halPluginFunction first = nullptr, again = nullptr;
        REQUIRE_OK(plugin().moduleGetFunction(module, "twice", &first));
        REQUIRE_OK(plugin().moduleGetFunction(module, "twice", &again));
        CHECK(first == again);
        REQUIRE_OK(plugin().moduleUnload(module));
    }
}

TEST_CASE("source that does not compile is HAL_ERROR_INVALID_IMAGE with the build log") {
    halPluginModule module = nullptr;
    const std::string broken =
        "kernel void broken(global int* data) { data[0] = undeclared_identifier_7; }\n";
    CHECK(load(broken, &module) == HAL_ERROR_INVALID_IMAGE);
    const std::string message = lastError();
    CHECK(message.find("CL_BUILD_PROGRAM_FAILURE") != std::string::npos);
    CHECK(message.find("build log") != std::string::npos);
    CHECK(message.find("undeclared_identifier_7") != std::string::npos);
}

TEST_CASE("an unknown kernel name is HAL_ERROR_NOT_FOUND") {
    halPluginModule module = nullptr;
    REQUIRE_OK(load(kSource, &module));
    halPluginFunction function = nullptr;
    CHECK(plugin().moduleGetFunction(module, "no_such_kernel", &function) == HAL_ERROR_NOT_FOUND);
    CHECK(lastError().find("no_such_kernel") != std::string::npos);
    CHECK(lastError().find("CL_INVALID_KERNEL_NAME") != std::string::npos);
    REQUIRE_OK(plugin().moduleUnload(module));
}

TEST_CASE("a binary that is neither source nor SPIR-V is HAL_ERROR_INVALID_IMAGE") {
    halPluginModule module = nullptr;
    const std::string elf(
        "\x7f"
        "ELF\x02\x01\x01\0\0\0\0\0kernel",
        17);
    CHECK(load(elf, &module) == HAL_ERROR_INVALID_IMAGE);
    CHECK(lastError().find("NUL byte at offset 7") != std::string::npos);
}

TEST_CASE("SPIR-V the device cannot take is HAL_ERROR_INVALID_IMAGE") {
    // A SPIR-V header and nothing else: refused by a device without SPIR-V support, and not a
    // valid module for one with it.
    const uint32_t words[5] = {0x07230203, 0x00010000, 0, 1, 0};
    halPluginModule module = nullptr;
    CHECK(plugin().moduleLoadData(device(), words, sizeof words, &module) ==
          HAL_ERROR_INVALID_IMAGE);
    const std::string message = lastError();
    CHECK((message.find("SPIR-V") != std::string::npos ||
           message.find("clCreateProgramWithIL") != std::string::npos ||
           message.find("clBuildProgram") != std::string::npos));
}
