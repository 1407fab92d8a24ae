// The Level Zero backend's driver-free translations: priorities, launch dimensions, module
// formats, timer arithmetic, device descriptions and error conversion.
#include <polyhal/plugin_support.hpp>

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <string>

#include "engine/translate.hpp"
#include "error.hpp"

using namespace polyhal::level_zero;

TEST_CASE("stream priorities map onto Level Zero's three levels", "[translate]") {
    // Lower numbers are higher priorities, as in CUDA; the default priority 0 is NORMAL.
    CHECK(kGreatestStreamPriority < 0);
    CHECK(kLeastStreamPriority > 0);
    CHECK(toQueuePriority(kGreatestStreamPriority) == ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH);
    CHECK(toQueuePriority(0) == ZE_COMMAND_QUEUE_PRIORITY_NORMAL);
    CHECK(toQueuePriority(kLeastStreamPriority) == ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_LOW);
}

TEST_CASE("a grid of blocks is a group count", "[translate]") {
    const ze_group_count_t groups = toGroupCount(halDim3{7, 5, 3});
    CHECK(groups.groupCountX == 7);
    CHECK(groups.groupCountY == 5);
    CHECK(groups.groupCountZ == 3);
}

TEST_CASE("SPIR-V is told from native binaries by its magic number", "[translate]") {
    const unsigned char littleEndian[] = {0x03, 0x02, 0x23, 0x07, 0x00, 0x00, 0x01, 0x00};
    const unsigned char bigEndian[] = {0x07, 0x23, 0x02, 0x03, 0x00, 0x01, 0x00, 0x00};
    const unsigned char elf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
    CHECK(moduleFormatOf(littleEndian, sizeof littleEndian) == ZE_MODULE_FORMAT_IL_SPIRV);
    CHECK(moduleFormatOf(bigEndian, sizeof bigEndian) == ZE_MODULE_FORMAT_IL_SPIRV);
    CHECK(moduleFormatOf(elf, sizeof elf) == ZE_MODULE_FORMAT_NATIVE);
    CHECK(moduleFormatOf(littleEndian, 3) == ZE_MODULE_FORMAT_NATIVE);
}

TEST_CASE("elapsed time follows the device timer's frequency and width", "[translate]") {
    constexpr uint64_t kHz = 19'200'000;  // the timer of many Intel GPUs
    CHECK(elapsedMilliseconds(1000, 1000 + 19'200, 64, kHz) == Approx(1.0f));
    CHECK(elapsedMilliseconds(5, 5, 64, kHz) == 0.0f);
    SECTION("an end recorded before the start gives a negative time") {
        CHECK(elapsedMilliseconds(1000 + 38'400, 1000, 64, kHz) == Approx(-2.0f));
    }
    SECTION("a timer that wrapped between the two readings") {
        CHECK(elapsedMilliseconds(0xFFFFFF00u, 0x100u, 32, 1'000'000) == Approx(0.512f));
        // Bits above the timer's width are not part of the reading.
        CHECK(elapsedMilliseconds(0xAB00000000000010u, 0x0000000000000410u, 32, 1'000'000) ==
              Approx(1.024f));
    }
}

TEST_CASE("the compute queue group is the first that accepts compute work", "[translate]") {
    ze_command_queue_group_properties_t groups[3] = {};
    groups[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    groups[1].flags =
        ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    groups[2].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE;
    CHECK(findComputeQueueGroup(groups, 3) == 1);
    CHECK(findComputeQueueGroup(groups, 1) == -1);
    CHECK(findComputeQueueGroup(groups, 0) == -1);
}

TEST_CASE("the copy engines are the first group that copies without computing", "[translate]") {
    ze_command_queue_group_properties_t groups[3] = {};
    groups[0].flags =
        ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    groups[1].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    groups[2].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    CHECK(findCopyOnlyQueueGroup(groups, 3) == 1);
    CHECK(findCopyOnlyQueueGroup(groups, 1) == -1);
    CHECK(findCopyOnlyQueueGroup(groups, 0) == -1);
}

TEST_CASE("device info comes from the driver's properties", "[translate]") {
    ze_device_properties_t properties{};
    std::strcpy(properties.name, "Intel(R) Data Center GPU Max 1100");
    properties.numSlices = 1;
    properties.numSubslicesPerSlice = 56;
    properties.numEUsPerSubslice = 8;
    ze_device_compute_properties_t compute{};
    compute.maxTotalGroupSize = 1024;
    compute.maxSharedLocalMemory = 128 * 1024;
    halPluginDeviceInfo info{};
    info.size = sizeof info;
    fillDeviceInfo(properties, compute, uint64_t{48} << 30, deviceCapabilities(false), &info);

    CHECK(info.size == sizeof info);
    CHECK(std::string(info.name) == "Intel(R) Data Center GPU Max 1100");
    CHECK(info.totalMemory == uint64_t{48} << 30);
    CHECK(info.computeUnits == 448);  // execution units
    CHECK(info.maxThreadsPerBlock == 1024);
    CHECK(info.maxSharedMemoryPerBlock == 128 * 1024);
    CHECK(info.leastStreamPriority == kLeastStreamPriority);
    CHECK(info.greatestStreamPriority == kGreatestStreamPriority);
    CHECK(info.capabilities == deviceCapabilities(false));
    CHECK((info.capabilities & HAL_DEVICE_CAP_PEER_COPY) == 0);
    CHECK((deviceCapabilities(true) & HAL_DEVICE_CAP_PEER_COPY) != 0);
    // Device allocations are not host memory on Level Zero.
    CHECK((info.capabilities & HAL_DEVICE_CAP_HOST_ACCESSIBLE) == 0);
    CHECK((info.capabilities & HAL_DEVICE_CAP_KERNELS) != 0);
    CHECK((info.capabilities & HAL_DEVICE_CAP_HOST_FUNCTIONS) != 0);
    CHECK((info.capabilities & HAL_DEVICE_CAP_TIMING_EVENTS) != 0);
}

TEST_CASE("device info stops at the size of the core's struct", "[translate]") {
    ze_device_properties_t properties{};
    std::strcpy(properties.name, "Intel(R) Arc(TM) A770 Graphics");
    ze_device_compute_properties_t compute{};
    compute.maxTotalGroupSize = 1024;
    // A core built before `capabilities` existed passes a struct that ends there.
    constexpr size_t kOlderSize = offsetof(halPluginDeviceInfo, capabilities);
    constexpr unsigned char kBeyond = 0xAB;
    halPluginDeviceInfo info;
    std::memset(&info, kBeyond, sizeof info);
    info.size = kOlderSize;
    fillDeviceInfo(properties, compute, uint64_t{16} << 30, deviceCapabilities(true), &info);

    CHECK(info.size == kOlderSize);
    CHECK(std::string(info.name) == "Intel(R) Arc(TM) A770 Graphics");
    CHECK(info.maxThreadsPerBlock == 1024);
    const auto* bytes = reinterpret_cast<const unsigned char*>(&info);
    size_t written = 0;
    for (size_t i = kOlderSize; i < sizeof info; ++i) written += bytes[i] != kBeyond;
    CHECK(written == 0);
}

TEST_CASE("ze_result_t values convert to halError", "[error]") {
    CHECK(toHalError(ZE_RESULT_SUCCESS) == HAL_SUCCESS);
    CHECK(toHalError(ZE_RESULT_NOT_READY) == HAL_ERROR_NOT_READY);
    CHECK(toHalError(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY) == HAL_ERROR_OUT_OF_MEMORY);
    CHECK(toHalError(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY) == HAL_ERROR_OUT_OF_MEMORY);
    CHECK(toHalError(ZE_RESULT_ERROR_DEVICE_LOST) == HAL_ERROR_LAUNCH_FAILED);
    CHECK(toHalError(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE) == HAL_ERROR_INVALID_IMAGE);
    CHECK(toHalError(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY) == HAL_ERROR_INVALID_IMAGE);
    CHECK(toHalError(ZE_RESULT_ERROR_INVALID_KERNEL_NAME) == HAL_ERROR_NOT_FOUND);
    CHECK(toHalError(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE) == HAL_ERROR_INVALID_VALUE);
    CHECK(toHalError(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) == HAL_ERROR_NOT_SUPPORTED);
    CHECK(toHalError(ZE_RESULT_ERROR_UNKNOWN) == HAL_ERROR_BACKEND);
    CHECK(toHalError(static_cast<ze_result_t>(0x7abcdef0)) == HAL_ERROR_BACKEND);
}

TEST_CASE("ze_result_t values are named as Level Zero names them", "[error]") {
    CHECK(std::string(resultName(ZE_RESULT_ERROR_UNINITIALIZED)) ==
          "ZE_RESULT_ERROR_UNINITIALIZED");
    CHECK(std::string(resultName(ZE_RESULT_ERROR_DEVICE_LOST)) == "ZE_RESULT_ERROR_DEVICE_LOST");
    CHECK(std::string(resultName(ZE_RESULT_NOT_READY)) == "ZE_RESULT_NOT_READY");
    CHECK(std::string(resultName(static_cast<ze_result_t>(0x7abcdef0))) ==
          "ZE_RESULT_<unrecognized>");
    CHECK(std::string(resultDescription(ZE_RESULT_ERROR_UNINITIALIZED)) ==
          "driver is not initialized");
}

namespace {
std::string tMessage;
void recordMessage(const char* message) {
    tMessage = message;
}
}  // namespace

TEST_CASE("a failed call leaves its name, result name and description as the message", "[error]") {
    const halPluginHost host{sizeof(halPluginHost), HAL_PLUGIN_ABI_VERSION, nullptr, nullptr,
                             recordMessage};
    polyhal::plugin::host = &host;
    tMessage.clear();
    CHECK(check(ZE_RESULT_SUCCESS, "zeMemFree") == HAL_SUCCESS);
    CHECK(tMessage.empty());
    CHECK(check(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, "zeMemAllocDevice") ==
          HAL_ERROR_OUT_OF_MEMORY);
    CHECK(tMessage ==
          "zeMemAllocDevice: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY (insufficient device memory to "
          "satisfy call)");
    polyhal::plugin::host = nullptr;
}
