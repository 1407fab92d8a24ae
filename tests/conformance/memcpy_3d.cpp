// halMemcpy3D and halMemcpy3DAsync: pitched boxes in every direction, padding left alone,
// stream order, and the checks on params, pitches, slice pitches, spans and bounds.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "cts.hpp"

namespace {

constexpr size_t kWidth = 20, kHeight = 7, kDepth = 5;  // a box of bytes
// Host rows padded to 24 bytes, slices to 8 rows; device rows to 32 bytes, slices to 9 rows.
constexpr size_t kHostPitch = 24, kHostSlice = kHostPitch * 8;
constexpr size_t kDevicePitch = 32, kDeviceSlice = kDevicePitch * 9;

std::vector<uint8_t> hostVolume(uint8_t seed) {
    std::vector<uint8_t> volume(kHostSlice * kDepth);
    for (size_t i = 0; i < volume.size(); ++i) volume[i] = static_cast<uint8_t>(i * 7 + seed);
    return volume;
}

halMemcpy3DParams box(void* dst, size_t dstPitch, size_t dstSlice, const void* src, size_t srcPitch,
                      size_t srcSlice, halMemcpyKind kind) {
    halMemcpy3DParams params{};
    params.size = sizeof params;
    params.dst = dst;
    params.dstPitch = dstPitch;
    params.dstSlicePitch = dstSlice;
    params.src = src;
    params.srcPitch = srcPitch;
    params.srcSlicePitch = srcSlice;
    params.width = kWidth;
    params.height = kHeight;
    params.depth = kDepth;
    params.kind = kind;
    return params;
}

// Bytes of the box that differ between two host volumes.
size_t boxDifferences(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    size_t differences = 0;
    for (size_t z = 0; z < kDepth; ++z) {
        for (size_t y = 0; y < kHeight; ++y) {
            for (size_t x = 0; x < kWidth; ++x) {
                const size_t at = z * kHostSlice + y * kHostPitch + x;
                differences += a[at] != b[at];
            }
        }
    }
    return differences;
}

}  // namespace

TEST_CASE("halMemcpy3D copies a box there and back, leaving the padding alone",
          "[memcpy][memcpy3d]") {
    const auto source = hostVolume(3);
    cts::DeviceMemory device(kDeviceSlice * kDepth);
    cts::DeviceMemory other(kDeviceSlice * kDepth);
    constexpr uint8_t kPadding = 0xEE;
    HAL_REQUIRE_OK(halMemset(device.get(), device.size(), kPadding, device.size()));
    auto params = box(device.get(), kDevicePitch, kDeviceSlice, source.data(), kHostPitch,
                      kHostSlice, HAL_MEMCPY_HOST_TO_DEVICE);
    HAL_REQUIRE_OK(halMemcpy3D(&params));
    params = box(other.get(), kDevicePitch, kDeviceSlice, device.get(), kDevicePitch, kDeviceSlice,
                 HAL_MEMCPY_DEVICE_TO_DEVICE);
    HAL_REQUIRE_OK(halMemcpy3D(&params));
    std::vector<uint8_t> back(source.size(), 0);
    params = box(back.data(), kHostPitch, kHostSlice, other.get(), kDevicePitch, kDeviceSlice,
                 HAL_MEMCPY_DEFAULT);
    HAL_REQUIRE_OK(halMemcpy3D(&params));
    CHECK(boxDifferences(back, source) == 0);

    std::vector<uint8_t> wholeDevice(device.size());
    HAL_REQUIRE_OK(halMemcpy(wholeDevice.data(), wholeDevice.size(), device.get(), device.size(),
                             HAL_MEMCPY_DEVICE_TO_HOST));
    size_t paddingTouched = 0;
    for (size_t at = 0; at < wholeDevice.size(); ++at) {
        const size_t z = at / kDeviceSlice, y = at % kDeviceSlice / kDevicePitch,
                     x = at % kDevicePitch;
        const bool inBox = z < kDepth && y < kHeight && x < kWidth;
        if (!inBox) paddingTouched += wholeDevice[at] != kPadding;
    }
    CHECK(paddingTouched == 0);
}

TEST_CASE("halMemcpy3DAsync runs in stream order and the pool sees its operands",
          "[memcpy][memcpy3d][pool]") {
    const auto source = hostVolume(9);
    cts::HostMemory pinnedSource(source.size()), pinnedResult(source.size());
    std::copy(source.begin(), source.end(), pinnedSource.get<uint8_t>());
    std::fill_n(pinnedResult.get<uint8_t>(), source.size(), 0);
    cts::Stream stream;
    void* block = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&block, kDeviceSlice * kDepth, stream));
    auto params = box(block, kDevicePitch, kDeviceSlice, pinnedSource.get(), kHostPitch, kHostSlice,
                      HAL_MEMCPY_HOST_TO_DEVICE);
    HAL_REQUIRE_OK(halMemcpy3DAsync(&params, stream));
    params = box(pinnedResult.get(), kHostPitch, kHostSlice, block, kDevicePitch, kDeviceSlice,
                 HAL_MEMCPY_DEVICE_TO_HOST);
    HAL_REQUIRE_OK(halMemcpy3DAsync(&params, stream));
    HAL_REQUIRE_OK(halFreeAsync(block, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    const std::vector<uint8_t> result(pinnedResult.get<uint8_t>(),
                                      pinnedResult.get<uint8_t>() + source.size());
    CHECK(boxDifferences(result, source) == 0);
}

TEST_CASE("halMemcpy3D: one slice ignores the slice pitch; contiguous boxes and empty boxes",
          "[memcpy][memcpy3d]") {
    const auto source = hostVolume(5);
    cts::DeviceMemory device(source.size());
    std::vector<uint8_t> back(source.size(), 0);
    auto params =
        box(device.get(), kHostPitch, 0, source.data(), kHostPitch, 0, HAL_MEMCPY_HOST_TO_DEVICE);
    params.depth = 1;
    HAL_REQUIRE_OK(halMemcpy3D(&params));
    // The whole volume as one contiguous box: rows and slices without padding.
    params = box(back.data(), kHostPitch, kHostSlice, device.get(), kHostPitch, kHostSlice,
                 HAL_MEMCPY_DEVICE_TO_HOST);
    params.width = kHostPitch;
    params.height = kHostSlice / kHostPitch;
    params.depth = 1;
    HAL_REQUIRE_OK(halMemcpy3D(&params));
    for (size_t y = 0; y < kHeight; ++y) {
        CHECK(std::equal(back.begin() + y * kHostPitch, back.begin() + y * kHostPitch + kWidth,
                         source.begin() + y * kHostPitch));
    }
    params = box(nullptr, 0, 0, nullptr, 0, 0, HAL_MEMCPY_DEFAULT);
    params.depth = 0;
    HAL_CHECK_OK(halMemcpy3D(&params));
    cts::Stream stream;
    HAL_CHECK_OK(halMemcpy3DAsync(&params, stream));
}

TEST_CASE(
    "halMemcpy3D refuses bad params, overlapping slices, overflowing spans and boxes "
    "past the end",
    "[memcpy][memcpy3d][errors]") {
    const auto source = hostVolume(1);
    cts::DeviceMemory device(kDeviceSlice * kDepth);
    CHECK(halMemcpy3D(nullptr) == HAL_ERROR_INVALID_VALUE);
    auto params = box(device.get(), kDevicePitch, kDeviceSlice, source.data(), kHostPitch,
                      kHostSlice, HAL_MEMCPY_HOST_TO_DEVICE);
    params.size = sizeof params - 1;
    CHECK(halMemcpy3D(&params) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("sizeof(halMemcpy3DParams)"));
    params.size = sizeof params;
    params.dstSlicePitch = kDevicePitch * (kHeight - 1);  // the slice's rows need more
    CHECK(halMemcpy3D(&params) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("slices would overlap"));
    params.dstSlicePitch = SIZE_MAX / 2;
    CHECK(halMemcpy3D(&params) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("address space"));
    params.dstSlicePitch = kDeviceSlice;
    params.srcSlicePitch = kHostSlice / 2;  // overlapping source slices are refused too
    CHECK(halMemcpy3D(&params) == HAL_ERROR_INVALID_VALUE);
    params.srcSlicePitch = kHostSlice;
    params.depth = kDepth + 1;  // a slice past the end of the device block
    std::vector<uint8_t> bigSource(kHostSlice * (kDepth + 1));
    params.src = bigSource.data();
    CHECK(halMemcpy3D(&params) == HAL_ERROR_INVALID_VALUE);
    CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("past the end"));
    params.depth = kDepth;
    params.kind = static_cast<halMemcpyKind>(-1);
    CHECK(halMemcpy3D(&params) == HAL_ERROR_INVALID_VALUE);
    params.kind = HAL_MEMCPY_HOST_TO_DEVICE;
    CHECK(halMemcpy3DAsync(&params, reinterpret_cast<halStream>(static_cast<uintptr_t>(0x10))) ==
          HAL_ERROR_INVALID_HANDLE);
}
