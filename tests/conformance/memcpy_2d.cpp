// halMemcpy2D and halMemcpy2DAsync: pitched rectangles in every direction, padding left alone,
// stream order, and the checks on pitches, spans and bounds.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "cts.hpp"

namespace {

constexpr size_t kWidth = 100, kHeight = 37;  // a rectangle of bytes
constexpr size_t kHostPitch = 128, kDevicePitch = 256;

std::vector<uint8_t> hostImage(uint8_t seed) {
    std::vector<uint8_t> image(kHostPitch * kHeight);
    for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<uint8_t>(i * 13 + seed);
    return image;
}

// Bytes of the rectangle that differ between two images of pitch kHostPitch.
size_t rectangleDifferences(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    size_t differences = 0;
    for (size_t row = 0; row < kHeight; ++row) {
        for (size_t column = 0; column < kWidth; ++column) {
            differences += a[row * kHostPitch + column] != b[row * kHostPitch + column];
        }
    }
    return differences;
}

}  // namespace

TEST_CASE("halMemcpy2D copies a rectangle there and back, leaving the padding alone",
          "[memcpy][memcpy2d]") {
    const auto source = hostImage(3);
    cts::DeviceMemory device(kDevicePitch * kHeight);
    cts::DeviceMemory other(kDevicePitch * kHeight);
    constexpr uint8_t kPadding = 0xEE;
    HAL_REQUIRE_OK(halMemset(device.get(), device.size(), kPadding, device.size()));
    HAL_REQUIRE_OK(halMemcpy2D(device.get(), kDevicePitch, source.data(), kHostPitch, kWidth,
                               kHeight, HAL_MEMCPY_HOST_TO_DEVICE));
    HAL_REQUIRE_OK(halMemcpy2D(other.get(), kDevicePitch, device.get(), kDevicePitch, kWidth,
                               kHeight, HAL_MEMCPY_DEVICE_TO_DEVICE));
    std::vector<uint8_t> back(kHostPitch * kHeight, 0);
    HAL_REQUIRE_OK(halMemcpy2D(back.data(), kHostPitch, other.get(), kDevicePitch, kWidth, kHeight,
                               HAL_MEMCPY_DEFAULT));
    CHECK(rectangleDifferences(back, source) == 0);

    std::vector<uint8_t> wholeDevice(device.size());
    HAL_REQUIRE_OK(halMemcpy(wholeDevice.data(), wholeDevice.size(), device.get(), device.size(),
                             HAL_MEMCPY_DEVICE_TO_HOST));
    size_t paddingTouched = 0;
    for (size_t row = 0; row < kHeight; ++row) {
        for (size_t column = kWidth; column < kDevicePitch; ++column) {
            paddingTouched += wholeDevice[row * kDevicePitch + column] != kPadding;
        }
    }
    CHECK(paddingTouched == 0);
}

TEST_CASE("halMemcpy2DAsync runs in stream order and the pool sees its operands",
          "[memcpy][memcpy2d][pool]") {
    const auto source = hostImage(9);
    cts::HostMemory pinnedSource(source.size()), pinnedResult(source.size());
    std::copy(source.begin(), source.end(), pinnedSource.get<uint8_t>());
    cts::Stream stream;
    void* block = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&block, kDevicePitch * kHeight, stream));
    HAL_REQUIRE_OK(halMemcpy2DAsync(block, kDevicePitch, pinnedSource.get(), kHostPitch, kWidth,
                                    kHeight, HAL_MEMCPY_HOST_TO_DEVICE, stream));
    HAL_REQUIRE_OK(halMemcpy2DAsync(pinnedResult.get(), kHostPitch, block, kDevicePitch, kWidth,
                                    kHeight, HAL_MEMCPY_DEVICE_TO_HOST, stream));
    HAL_REQUIRE_OK(halFreeAsync(block, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    const std::vector<uint8_t> result(pinnedResult.get<uint8_t>(),
                                      pinnedResult.get<uint8_t>() + source.size());
    CHECK(rectangleDifferences(result, source) == 0);
}

TEST_CASE("contiguous rows are one copy; empty rectangles copy nothing", "[memcpy][memcpy2d]") {
    const auto source = hostImage(5);
    cts::DeviceMemory device(source.size());
    std::vector<uint8_t> back(source.size(), 0);
    HAL_REQUIRE_OK(halMemcpy2D(device.get(), kHostPitch, source.data(), kHostPitch, kHostPitch,
                               kHeight, HAL_MEMCPY_HOST_TO_DEVICE));
    HAL_REQUIRE_OK(halMemcpy2D(back.data(), kHostPitch, device.get(), kHostPitch, kHostPitch,
                               kHeight, HAL_MEMCPY_DEVICE_TO_HOST));
    CHECK(back == source);
    HAL_CHECK_OK(halMemcpy2D(nullptr, 0, nullptr, 0, 0, kHeight, HAL_MEMCPY_DEFAULT));
    HAL_CHECK_OK(halMemcpy2D(nullptr, 0, nullptr, 0, kWidth, 0, HAL_MEMCPY_DEFAULT));
}

TEST_CASE("halMemcpy2D refuses overlapping rows, spans that overflow and rows past the end",
          "[memcpy][memcpy2d][errors]") {
    const auto source = hostImage(1);
    cts::DeviceMemory device(kDevicePitch * kHeight);
    CHECK(halMemcpy2D(device.get(), kWidth - 1, source.data(), kHostPitch, kWidth, kHeight,
                      HAL_MEMCPY_HOST_TO_DEVICE) == HAL_ERROR_INVALID_VALUE);
    CHECK(halMemcpy2D(device.get(), kDevicePitch, source.data(), kWidth - 1, kWidth, kHeight,
                      HAL_MEMCPY_HOST_TO_DEVICE) == HAL_ERROR_INVALID_VALUE);
    CHECK(halMemcpy2D(nullptr, kDevicePitch, source.data(), kHostPitch, kWidth, kHeight,
                      HAL_MEMCPY_HOST_TO_DEVICE) == HAL_ERROR_INVALID_VALUE);
    CHECK(halMemcpy2D(device.get(), SIZE_MAX / 2, source.data(), kHostPitch, kWidth, 3,
                      HAL_MEMCPY_HOST_TO_DEVICE) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("address space"));
    // Rows past the end of the device block (whatever granule the pool rounds it to).
    CHECK(halMemcpy2D(device.get(), kDevicePitch, source.data(), kWidth, kWidth, kHeight + 3,
                      HAL_MEMCPY_HOST_TO_DEVICE) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("past the end"));
    CHECK(halMemcpy2DAsync(device.get(), kDevicePitch, source.data(), kHostPitch, kWidth, kHeight,
                           HAL_MEMCPY_HOST_TO_DEVICE,
                           reinterpret_cast<halStream>(static_cast<uintptr_t>(0x10))) ==
          HAL_ERROR_INVALID_HANDLE);
}
