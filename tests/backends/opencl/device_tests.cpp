// Entry negotiation and the device description, checked against what OpenCL itself reports.
#include <cstddef>
#include <string>

#include "plugin_fixture.hpp"

using namespace opencl_test;

namespace {

template <class T>
T clInfo(cl_device_id id, cl_device_info query) {
    T value{};
    REQUIRE(clGetDeviceInfo(id, query, sizeof value, &value, nullptr) == CL_SUCCESS);
    return value;
}

std::string clName(cl_device_id id) {
    char name[256] = {};
    REQUIRE(clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof name, name, nullptr) == CL_SUCCESS);
    return name;
}

halPluginDeviceInfo deviceInfo() {
    halPluginDeviceInfo info{};
    info.size = sizeof info;
    REQUIRE_OK(plugin().deviceGetInfo(device(), &info));
    return info;
}

}  // namespace

TEST_CASE("the entry point fills the table and names the backend") {
    const halPluginDispatchTable& table = plugin();
    CHECK(std::string(table.name) == "opencl");
    CHECK(table.size == sizeof(halPluginDispatchTable));
    CHECK(table.abiVersion == HAL_PLUGIN_ABI_VERSION);
    CHECK(table.launchKernel != nullptr);
    CHECK(table.streamGetNativeHandle != nullptr);
    int count = 0;
    REQUIRE_OK(table.deviceGetCount(&count));
    CHECK(count >= 1);
}

TEST_CASE("the entry point refuses a core of another major ABI version") {
    halPluginDispatchTable table{};
    table.size = sizeof table;
    const uint32_t next = HAL_PLUGIN_MAKE_VERSION(HAL_PLUGIN_ABI_VERSION_MAJOR + 1, 0);
    CHECK(entryPoint()(next, &testHost(), &table) == HAL_ERROR_BACKEND_INCOMPATIBLE);
    CHECK(lastError().find("opencl") != std::string::npos);
}

TEST_CASE("device info is what OpenCL reports for the device") {
    const cl_device_id id = clDevice();
    const halPluginDeviceInfo info = deviceInfo();
    CHECK(std::string(info.name) == clName(id));
    CHECK(info.totalMemory == clInfo<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE));
    CHECK(info.computeUnits == clInfo<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS));
    CHECK(info.maxThreadsPerBlock == clInfo<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE));
    CHECK(info.maxSharedMemoryPerBlock == clInfo<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE));
    const uint64_t always = HAL_DEVICE_CAP_HOST_FUNCTIONS | HAL_DEVICE_CAP_NATIVE_HANDLES |
                            HAL_DEVICE_CAP_TIMING_EVENTS | HAL_DEVICE_CAP_KERNELS;
    CHECK((info.capabilities & always) == always);
    const bool systemSvm = (clInfo<cl_device_svm_capabilities>(id, CL_DEVICE_SVM_CAPABILITIES) &
                            CL_DEVICE_SVM_FINE_GRAIN_SYSTEM) != 0;
    CHECK(((info.capabilities & HAL_DEVICE_CAP_HOST_ACCESSIBLE) != 0) == systemSvm);
}

TEST_CASE("stream priorities are offered exactly when cl_khr_priority_hints is") {
    const halPluginDeviceInfo info = deviceInfo();
    size_t size = 0;
    REQUIRE(clGetDeviceInfo(clDevice(), CL_DEVICE_EXTENSIONS, 0, nullptr, &size) == CL_SUCCESS);
    std::string extensions(size, '\0');
    REQUIRE(clGetDeviceInfo(clDevice(), CL_DEVICE_EXTENSIONS, size, extensions.data(), nullptr) ==
            CL_SUCCESS);
    if (extensions.find("cl_khr_priority_hints") != std::string::npos) {
        CHECK((info.capabilities & HAL_DEVICE_CAP_STREAM_PRIORITIES) != 0);
        CHECK(info.leastStreamPriority == 1);
        CHECK(info.greatestStreamPriority == -1);
    } else {
        CHECK((info.capabilities & HAL_DEVICE_CAP_STREAM_PRIORITIES) == 0);
        CHECK(info.leastStreamPriority == 0);
        CHECK(info.greatestStreamPriority == 0);
    }
    // Every priority in the range gives a working stream.
    for (int priority = info.greatestStreamPriority; priority <= info.leastStreamPriority;
         ++priority) {
        Stream stream(priority);
        stream.synchronize();
    }
}

TEST_CASE("an older core's smaller device info is filled only up to its size") {
    halPluginDeviceInfo info;
    std::memset(&info, 0x5a, sizeof info);
    info.size = offsetof(halPluginDeviceInfo, capabilities);
    REQUIRE_OK(plugin().deviceGetInfo(device(), &info));
    CHECK(info.size == offsetof(halPluginDeviceInfo, capabilities));
    CHECK(std::string(info.name) == clName(clDevice()));
    const auto* tail = reinterpret_cast<const unsigned char*>(&info) + info.size;
    for (size_t i = 0; i < sizeof info - info.size; ++i) CHECK(tail[i] == 0x5a);
}

TEST_CASE("the native handle of a stream is its profiling OpenCL queue") {
    Stream stream;
    void* native = nullptr;
    REQUIRE_OK(plugin().streamGetNativeHandle(stream.get(), &native));
    cl_command_queue_properties properties = 0;
    REQUIRE(clGetCommandQueueInfo(static_cast<cl_command_queue>(native), CL_QUEUE_PROPERTIES,
                                  sizeof properties, &properties, nullptr) == CL_SUCCESS);
    CHECK((properties & CL_QUEUE_PROFILING_ENABLE) != 0);
    CHECK((properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0);
}
