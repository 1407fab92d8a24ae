// Run by CTest with POLYHAL_OPENCL_PLATFORM set: the backend uses only the OpenCL platforms whose
// name contains that text, ignoring case, and says which platforms there were when none does.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>

#include "plugin_fixture.hpp"

using namespace opencl_test;

namespace {

std::string lowerCase(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

// The devices of the OpenCL platforms whose name contains `part`, ignoring case, as OpenCL
// itself reports them.
cl_uint devicesOnPlatformsNamed(const std::string& part) {
    cl_uint count = 0;
    REQUIRE(clGetPlatformIDs(0, nullptr, &count) == CL_SUCCESS);
    std::vector<cl_platform_id> platforms(count);
    REQUIRE(clGetPlatformIDs(count, platforms.data(), nullptr) == CL_SUCCESS);
    cl_uint devices = 0;
    for (cl_platform_id platform : platforms) {
        char name[256] = {};
        REQUIRE(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name, name, nullptr) ==
                CL_SUCCESS);
        cl_uint n = 0;
        if (lowerCase(name).find(lowerCase(part)) != std::string::npos &&
            clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) == CL_SUCCESS) {
            devices += n;
        }
    }
    return devices;
}

}  // namespace

TEST_CASE("a platform name that matches nothing is HAL_ERROR_NO_DEVICE naming the platforms",
          "[.platform_unmatched]") {
    REQUIRE(std::getenv("POLYHAL_OPENCL_PLATFORM") == std::string("no such platform"));
    CHECK(negotiated().initialize() == HAL_ERROR_NO_DEVICE);
    CHECK(lastError().find("POLYHAL_OPENCL_PLATFORM='no such platform'") != std::string::npos);
    CHECK(lastError().find("not matched: 'Portable Computing Language'") != std::string::npos);
}

TEST_CASE("only the platforms named by part of their name in any case are used",
          "[.platform_chosen]") {
    const char* wanted = std::getenv("POLYHAL_OPENCL_PLATFORM");
    REQUIRE(wanted != nullptr);
    int count = 0;
    REQUIRE_OK(plugin().deviceGetCount(&count));
    CHECK(count >= 1);
    CHECK(static_cast<cl_uint>(count) == devicesOnPlatformsNamed(wanted));
}
