// Run by CTest with OCL_ICD_VENDORS pointing at an empty folder: the ICD loader then finds no
// OpenCL driver at all, and initialize says so with OpenCL's own error name.
#include "plugin_fixture.hpp"

using namespace opencl_test;

TEST_CASE("without any OpenCL platform initialize is HAL_ERROR_NO_DEVICE", "[.no_platform]") {
    CHECK(negotiated().initialize() == HAL_ERROR_NO_DEVICE);
    CHECK(lastError().find("CL_PLATFORM_NOT_FOUND_KHR (-1001)") != std::string::npos);
}
