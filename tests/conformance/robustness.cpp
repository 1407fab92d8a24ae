// Hostile input: truncated images, absurd sizes, products that wrap, invalid enum values, paths
// that are not files.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kernels.hpp"

namespace {

std::vector<char> kernelImage(const char* kernel) {
    std::string searched;
    const std::string path = cts::findKernelImage(kernel, &searched);
    if (path.empty()) return {};
    std::ifstream file(path, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(file), {});
}

}  // namespace

TEST_CASE("a truncated module image is INVALID_IMAGE, never a crash", "[module][errors]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_KERNELS);
    const std::vector<char> image = kernelImage("fill_u32");
    if (image.empty()) return cts::skip("no CTS kernel image for this backend");
    for (size_t size : {size_t{16}, size_t{64}, size_t{1000}, image.size() / 2, image.size() - 1}) {
        if (size == 0 || size >= image.size()) continue;
        INFO("the first " << size << " of " << image.size() << " bytes");
        halModule module = nullptr;
        const halError status = halModuleLoadData(&module, image.data(), size);
        if (status == HAL_SUCCESS) {
            // A source image (OpenCL C) may still compile when cut at a boundary.
            CHECK(cts::backendName() != "cpu");
            HAL_CHECK_OK(halModuleUnload(module));
            continue;
        }
        CHECK(status == HAL_ERROR_INVALID_IMAGE);
        CHECK(std::string(halGetLastErrorMessage()).size() > 0);
    }
}

TEST_CASE("kernel arguments beyond the device's limit are INVALID_VALUE", "[kernel][errors]") {
    cts::Module module;
    halFunction fill = nullptr;
    if (!cts::loadKernel("fill_u32", module, &fill)) return;
    const uint64_t limit = cts::deviceProperties().maxKernelArgumentBytes;
    REQUIRE(limit >= 256);  // every backend takes at least CUDA's classic launches
    const std::vector<unsigned char> blob(limit + 1, 0);
    const halDim3 one = {1, 1, 1};

    const halKernelArg absurd[] = {{blob.data(), SIZE_MAX}};
    CHECK(halLaunchKernel(fill, one, one, 0, absurd, 1, nullptr) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(std::string(halGetLastErrorMessage()), Catch::Contains("argument"));
    const halKernelArg oneTooMany[] = {{blob.data(), limit + 1}};
    CHECK(halLaunchKernel(fill, one, one, 0, oneTooMany, 1, nullptr) == HAL_ERROR_INVALID_VALUE);
    // Each fits; together they do not, and the sum must not wrap around either.
    const halKernelArg together[] = {{blob.data(), limit}, {blob.data(), SIZE_MAX - limit + 2}};
    CHECK(halLaunchKernel(fill, one, one, 0, together, 2, nullptr) == HAL_ERROR_INVALID_VALUE);
    const halKernelArg halves[] = {{blob.data(), limit / 2 + 1}, {blob.data(), limit / 2 + 1}};
    CHECK(halLaunchKernel(fill, one, one, 0, halves, 2, nullptr) == HAL_ERROR_INVALID_VALUE);
    HAL_CHECK_OK(halSynchronizeDevice());
}

TEST_CASE("a block whose thread count wraps around 2^64 is INVALID_VALUE", "[kernel][errors]") {
    cts::Module module;
    halFunction fill = nullptr;
    if (!cts::loadKernel("fill_u32", module, &fill)) return;
    cts::DeviceMemory out(sizeof(uint32_t));
    void* outPtr = out.get();
    const uint32_t value = 1, n = 1;
    const halKernelArg args[] = {cts::arg(outPtr), cts::arg(value), cts::arg(n)};
    const halDim3 one = {1, 1, 1};
    for (const halDim3 block :
         {halDim3{0x80000000u, 0x80000000u, 4}, halDim3{0xffffffffu, 0xffffffffu, 0xffffffffu}}) {
        CHECK(halLaunchKernel(fill, one, block, 0, args, 3, nullptr) == HAL_ERROR_INVALID_VALUE);
        CHECK_THAT(std::string(halGetLastErrorMessage()), Catch::Contains("threads per block"));
    }
    HAL_CHECK_OK(halSynchronizeDevice());
}

TEST_CASE("an enum argument out of its range is INVALID_VALUE", "[errors]") {
    unsigned char host[16] = {};
    unsigned char other[16] = {};
    for (const uint32_t raw : {0xffffffffu, 5u, 0x7fffffffu, 0x80000000u}) {
        INFO("raw value " << raw);
        const auto kind = static_cast<halMemcpyKind>(raw);
        CHECK(halMemcpy(other, sizeof other, host, sizeof host, kind) == HAL_ERROR_INVALID_VALUE);
        CHECK(halMemcpyAsync(other, sizeof other, host, sizeof host, kind, nullptr) ==
              HAL_ERROR_INVALID_VALUE);
        const auto attribute = static_cast<halMemPoolAttribute>(raw);
        uint64_t value = 0;
        CHECK(halMemPoolSetAttribute(0, attribute, 0) == HAL_ERROR_INVALID_VALUE);
        CHECK(halMemPoolGetAttribute(0, attribute, &value) == HAL_ERROR_INVALID_VALUE);
        if (raw != HAL_ERROR_NOT_SUPPORTED) {
            CHECK(std::string(halGetErrorName(static_cast<halError>(raw))) ==
                  "HAL_ERROR_UNRECOGNIZED");
        }
        CHECK(std::string(halGetErrorString(static_cast<halError>(raw))).size() > 0);
    }
}

TEST_CASE("a directory is not a module file", "[module][errors]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_KERNELS);
    halModule module = nullptr;
    CHECK(halModuleLoadFile(&module, "/") == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(std::string(halGetLastErrorMessage()), Catch::Contains("directory"));
    CHECK(module == nullptr);
}

TEST_CASE("a FIFO is not a module file, and loading one does not wait for a writer",
          "[module][errors]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_KERNELS);
    const char* base = std::getenv("TMPDIR");
    std::string directory = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                            "/polyhal-cts-fifo-XXXXXX";
    REQUIRE(mkdtemp(directory.data()) != nullptr);
    const std::string fifo = directory + "/module.so";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    // A load that blocks in open() waits for a writer forever: after a generous while, the
    // watchdog becomes that writer, so the case fails instead of hanging.
    std::mutex mutex;
    std::condition_variable changed;
    bool returned = false;
    bool blocked = false;
    std::thread watchdog([&] {
        std::unique_lock<std::mutex> lock(mutex);
        if (changed.wait_for(lock, std::chrono::seconds(10), [&] { return returned; })) return;
        blocked = true;
        const int writer = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
        if (writer >= 0) close(writer);
    });
    halModule module = nullptr;
    const halError status = halModuleLoadFile(&module, fifo.c_str());
    const std::string message = halGetLastErrorMessage();
    {
        std::lock_guard<std::mutex> lock(mutex);
        returned = true;
    }
    changed.notify_one();
    watchdog.join();
    unlink(fifo.c_str());
    rmdir(directory.c_str());
    CHECK_FALSE(blocked);
    CHECK(status == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(message, Catch::Contains("not a regular file"));
    CHECK(module == nullptr);
}

TEST_CASE("halFreeAsync(NULL) is INVALID_VALUE, as documented", "[pool][errors]") {
    cts::Stream stream;
    CHECK(halFreeAsync(nullptr, stream) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(std::string(halGetLastErrorMessage()), Catch::Contains("NULL"));
}
