// The graph the GPU plugins' tests capture through polyhal's public API and launch natively: a
// fill of device memory, what the test adds (a kernel), a host function that counts its calls, a
// copy of the device memory to the host, and a box copy of two slices of it (slice pitches that
// are no whole number of rows, so one vendor node per slice). Include after Catch2.
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_GRAPH_SCENARIO_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_GRAPH_SCENARIO_HPP_

#include <polyhal/hal.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <functional>
#include <vector>

namespace polyhal::doubles {

class GraphScenario {
  public:
    static constexpr size_t kBytes = 256;
    // The box's rows in the destination: 2 slices of 2 rows of 8 bytes, 32 bytes between rows,
    // 80 between slices; in the source 16 and 48.
    static constexpr size_t kBoxBytes = 2 * 80;

    // A stream, kBytes of device memory and a page-locked buffer (zeroed) of the current device.
    GraphScenario() {
        REQUIRE(halCreateStream(&stream_) == HAL_SUCCESS);
        REQUIRE(halMalloc(&device_, kBytes) == HAL_SUCCESS);
        REQUIRE(halMallocHost(&pinned_, kBytes + kBoxBytes) == HAL_SUCCESS);
        std::memset(pinned_, 0, kBytes + kBoxBytes);
    }
    ~GraphScenario() {
        CHECK(halFree(device_) == HAL_SUCCESS);
        CHECK(halFreeHost(pinned_) == HAL_SUCCESS);
        CHECK(halDestroyStream(stream_) == HAL_SUCCESS);
    }
    GraphScenario(const GraphScenario&) = delete;
    GraphScenario& operator=(const GraphScenario&) = delete;

    halStream stream() const { return stream_; }
    void* const& device() const { return device_; }
    // kBytes for the copy, then kBoxBytes for the box.
    unsigned char* pinned() const { return static_cast<unsigned char*>(pinned_); }

    // Captures the graph, copying to `copy` (kBytes) and `box` (kBoxBytes); `between` runs
    // inside the capture after the fill.
    halGraph capture(void* copy, unsigned char* box, const std::function<void()>& between = {}) {
        REQUIRE(halStreamBeginCapture(stream_, HAL_CAPTURE_MODE_GLOBAL) == HAL_SUCCESS);
        REQUIRE(halMemsetAsync(device_, kBytes, 0x6B, kBytes, stream_) == HAL_SUCCESS);
        if (between) between();
        REQUIRE(halLaunchHostFunc(stream_, countCall, &calls_) == HAL_SUCCESS);
        REQUIRE(halMemcpyAsync(copy, kBytes, device_, kBytes, HAL_MEMCPY_DEVICE_TO_HOST, stream_) ==
                HAL_SUCCESS);
        const halMemcpy3DParams params = boxCopy(box, device_);
        REQUIRE(halMemcpy3DAsync(&params, stream_) == HAL_SUCCESS);
        halGraph graph = nullptr;
        REQUIRE(halStreamEndCapture(stream_, &graph) == HAL_SUCCESS);
        return graph;
    }

    int calls() const { return calls_; }

    // The box copy from device memory `source` to host memory `box` (kBoxBytes).
    static halMemcpy3DParams boxCopy(unsigned char* box, const void* source) {
        halMemcpy3DParams params{};
        params.size = sizeof params;
        params.dst = box;
        params.dstPitch = 32;
        params.dstSlicePitch = 80;
        params.src = source;
        params.srcPitch = 16;
        params.srcSlicePitch = 48;
        params.width = 8;
        params.height = 2;
        params.depth = 2;
        params.kind = HAL_MEMCPY_DEVICE_TO_HOST;
        return params;
    }

    // Each row of `box` holds the bytes of the device memory it was copied from, as `copy` holds
    // them; the bytes between the rows are untouched (zero).
    static void checkBox(const unsigned char* box, const unsigned char* copy) {
        for (size_t slice = 0; slice < 2; ++slice) {
            for (size_t row = 0; row < 2; ++row) {
                const unsigned char* got = box + slice * 80 + row * 32;
                const unsigned char* want = copy + slice * 48 + row * 16;
                CHECK(std::vector<unsigned char>(got, got + 8) ==
                      std::vector<unsigned char>(want, want + 8));
                CHECK(got[8] == 0);
            }
        }
    }

  private:
    static void countCall(void* calls) { ++*static_cast<std::atomic<int>*>(calls); }

    halStream stream_ = nullptr;
    void* device_ = nullptr;
    void* pinned_ = nullptr;
    std::atomic<int> calls_{0};
};

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_GRAPH_SCENARIO_HPP_
