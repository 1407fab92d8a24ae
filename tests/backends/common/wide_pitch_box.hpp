// A box copy whose pitches pass the device's maximum pitch, which the vendors' pitched copies
// refuse (the doubles report 1 MiB): the GPU plugins copy it row by row, eagerly and as nodes of a
// native graph. Include after Catch2.
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_WIDE_PITCH_BOX_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_WIDE_PITCH_BOX_HPP_

#include <polyhal/hal.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace polyhal::doubles {

// `graphLaunches` counts the vendor's successful graph launches.
inline void copyWidePitchBox(size_t maxPitch, uint64_t (*graphLaunches)()) {
    REQUIRE(halInit() == HAL_SUCCESS);
    REQUIRE(halSetDevice(0) == HAL_SUCCESS);
    constexpr size_t kWidth = 300, kHeight = 3, kDepth = 2;
    const size_t pitch = maxPitch + 4096;
    const size_t slicePitch = pitch * kHeight;
    const size_t bytes = slicePitch * kDepth;
    halStream stream = nullptr;
    void* from = nullptr;
    void* to = nullptr;
    void* host = nullptr;
    REQUIRE(halCreateStream(&stream) == HAL_SUCCESS);
    REQUIRE(halMalloc(&from, bytes) == HAL_SUCCESS);
    REQUIRE(halMalloc(&to, bytes) == HAL_SUCCESS);
    REQUIRE(halMallocHost(&host, bytes) == HAL_SUCCESS);
    auto* bytesOf = static_cast<unsigned char*>(host);
    for (size_t i = 0; i < bytes; ++i) bytesOf[i] = static_cast<unsigned char>(i * 13 + i / 509);
    REQUIRE(halMemcpy(from, bytes, host, bytes, HAL_MEMCPY_HOST_TO_DEVICE) == HAL_SUCCESS);
    // The box's bytes where they are, zeros elsewhere.
    std::vector<unsigned char> expected(bytes, 0);
    for (size_t slice = 0; slice < kDepth; ++slice) {
        for (size_t row = 0; row < kHeight; ++row) {
            const size_t at = slice * slicePitch + row * pitch;
            std::memcpy(expected.data() + at, bytesOf + at, kWidth);
        }
    }
    const halMemcpy3DParams box{sizeof box,
                                to,
                                pitch,
                                slicePitch,
                                from,
                                pitch,
                                slicePitch,
                                kWidth,
                                kHeight,
                                kDepth,
                                HAL_MEMCPY_DEVICE_TO_DEVICE};
    auto copied = [&] {
        REQUIRE(halMemcpy(host, bytes, to, bytes, HAL_MEMCPY_DEVICE_TO_HOST) == HAL_SUCCESS);
        return std::vector<unsigned char>(bytesOf, bytesOf + bytes) == expected;
    };

    REQUIRE(halMemset(to, bytes, 0, bytes) == HAL_SUCCESS);
    REQUIRE(halMemcpy3DAsync(&box, stream) == HAL_SUCCESS);
    REQUIRE(halSynchronizeStream(stream) == HAL_SUCCESS);
    CHECK(copied());

    REQUIRE(halMemset(to, bytes, 0, bytes) == HAL_SUCCESS);
    REQUIRE(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL) == HAL_SUCCESS);
    REQUIRE(halMemcpy3DAsync(&box, stream) == HAL_SUCCESS);
    halGraph graph = nullptr;
    REQUIRE(halStreamEndCapture(stream, &graph) == HAL_SUCCESS);
    const uint64_t before = graphLaunches();
    REQUIRE(halGraphLaunch(graph, stream) == HAL_SUCCESS);
    REQUIRE(halSynchronizeStream(stream) == HAL_SUCCESS);
    CHECK(graphLaunches() - before == 1);  // native: the driver took every node
    CHECK(copied());
    REQUIRE(halGraphDestroy(graph) == HAL_SUCCESS);
    REQUIRE(halFreeHost(host) == HAL_SUCCESS);
    REQUIRE(halFree(to) == HAL_SUCCESS);
    REQUIRE(halFree(from) == HAL_SUCCESS);
    REQUIRE(halDestroyStream(stream) == HAL_SUCCESS);
}

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_WIDE_PITCH_BOX_HPP_
