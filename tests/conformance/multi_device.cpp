// Several devices: the per-thread current device, objects bound to their device, copies and
// event waits between devices, per-device synchronisation and reset. The CPU backend provides
// two devices with POLYHAL_CPU_DEVICES=2 (the cts.cpu.multi_device run).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kernels.hpp"

namespace {

// Makes `device` current for the scope, restoring the previous one afterwards.
class CurrentDevice {
  public:
    explicit CurrentDevice(int device) {
        HAL_REQUIRE_OK(halGetDevice(&previous_));
        HAL_REQUIRE_OK(halSetDevice(device));
    }
    CurrentDevice(const CurrentDevice&) = delete;
    CurrentDevice& operator=(const CurrentDevice&) = delete;
    ~CurrentDevice() { halSetDevice(previous_); }

  private:
    int previous_ = 0;
};

// True, after printing the skip reason, when fewer than two devices are present.
bool lacksSecondDevice() {
    int count = 0;
    HAL_REQUIRE_OK(halGetDeviceCount(&count));
    if (count >= 2) return false;
    cts::skip("needs two devices, found " + std::to_string(count) +
              " (the CPU backend has two with POLYHAL_CPU_DEVICES=2)");
    return true;
}

#define CTS_REQUIRE_TWO_DEVICES()        \
    do {                                 \
        if (lacksSecondDevice()) return; \
    } while (0)

bool allBytes(const void* bytes, size_t size, unsigned char value) {
    const auto* begin = static_cast<const unsigned char*>(bytes);
    return std::all_of(begin, begin + size, [value](unsigned char byte) { return byte == value; });
}

// Device memory allocated on `device`, freed with its owner.
std::unique_ptr<cts::DeviceMemory> allocateOn(int device, size_t size) {
    CurrentDevice current(device);
    return std::make_unique<cts::DeviceMemory>(size);
}

}  // namespace

TEST_CASE("the current device is per thread", "[multi_device]") {
    CTS_REQUIRE_TWO_DEVICES();
    CurrentDevice second(1);
    int mine = -1, theirs = -1, theirsAfterSet = -1, mineAfter = -1;
    std::thread([&] {
        halGetDevice(&theirs);
        halSetDevice(0);
        halGetDevice(&theirsAfterSet);
    }).join();
    HAL_REQUIRE_OK(halGetDevice(&mine));
    CHECK(mine == 1);
    CHECK(theirs == 0);
    CHECK(theirsAfterSet == 0);
    HAL_REQUIRE_OK(halGetDevice(&mineAfter));
    CHECK(mineAfter == 1);
}

TEST_CASE("each device reports its own ordinal", "[multi_device]") {
    CTS_REQUIRE_TWO_DEVICES();
    for (int device = 0; device < 2; ++device) {
        CurrentDevice current(device);
        const halDeviceProperties props = cts::deviceProperties();
        CHECK(props.ordinal == device);
    }
}

TEST_CASE("an event and a stream of different devices cannot be recorded together",
          "[multi_device][event]") {
    CTS_REQUIRE_TWO_DEVICES();
    cts::Event onFirst;
    CurrentDevice second(1);
    cts::Stream onSecond;
    CHECK(halRecordEvent(onFirst, onSecond) == HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("halFreeAsync of another device's block is refused, naming both devices",
          "[multi_device][pool][errors]") {
    CTS_REQUIRE_TWO_DEVICES();
    void* block = nullptr;
    {
        CurrentDevice second(1);
        HAL_REQUIRE_OK(halMallocAsync(&block, 4096, nullptr));
    }
    cts::Stream first;  // a stream of device 0
    CHECK(halFreeAsync(block, first) == HAL_ERROR_INVALID_VALUE);
    const std::string message = halGetLastErrorMessage();
    CHECK_THAT(message, Catch::Contains("device 1's pool") && Catch::Contains("device 0"));
    // The refusal left the block to its device, which frees it.
    CurrentDevice second(1);
    HAL_CHECK_OK(halFreeAsync(block, nullptr));
    HAL_CHECK_OK(halSynchronizeStream(nullptr));
}

TEST_CASE("memory is copied between devices", "[multi_device][memcpy]") {
    CTS_REQUIRE_TWO_DEVICES();
    constexpr size_t kSize = 256 * 1024;
    std::vector<uint8_t> source(kSize), result(kSize, 0);
    for (size_t i = 0; i < kSize; ++i) source[i] = static_cast<uint8_t>(i * 13 + 1);
    cts::DeviceMemory onFirst(kSize);
    HAL_REQUIRE_OK(halMemcpy(onFirst.get(), kSize, source.data(), kSize, HAL_MEMCPY_DEFAULT));
    CurrentDevice second(1);
    cts::DeviceMemory onSecond(kSize);

    SECTION("synchronously, with an explicit kind and inferred") {
        const halMemcpyKind kind = GENERATE(HAL_MEMCPY_DEVICE_TO_DEVICE, HAL_MEMCPY_DEFAULT);
        HAL_REQUIRE_OK(halMemcpy(onSecond.get(), kSize, onFirst.get(), kSize, kind));
        HAL_REQUIRE_OK(
            halMemcpy(result.data(), kSize, onSecond.get(), kSize, HAL_MEMCPY_DEVICE_TO_HOST));
        CHECK(result == source);
    }
    SECTION("on a stream of the destination device") {
        cts::Stream stream;
        HAL_REQUIRE_OK(halMemcpyAsync(onSecond.get(), kSize, onFirst.get(), kSize,
                                      HAL_MEMCPY_DEVICE_TO_DEVICE, stream));
        HAL_REQUIRE_OK(halMemcpyAsync(result.data(), kSize, onSecond.get(), kSize,
                                      HAL_MEMCPY_DEVICE_TO_HOST, stream));
        HAL_REQUIRE_OK(halSynchronizeStream(stream));
        CHECK(result == source);
    }
}

TEST_CASE("a copy between devices starts after the source device's default stream work",
          "[multi_device][memcpy][ordering]") {
    CTS_REQUIRE_TWO_DEVICES();
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    constexpr size_t kSize = 64 * 1024;
    cts::DeviceMemory onFirst(kSize);
    HAL_REQUIRE_OK(halMemset(onFirst.get(), kSize, 0x11, kSize));
    // Still queued on device 0's default stream when the copy is issued from device 1.
    cts::enqueueSleep(nullptr, std::chrono::milliseconds(200));
    HAL_REQUIRE_OK(halMemsetAsync(onFirst.get(), kSize, 0x22, kSize, nullptr));
    CurrentDevice second(1);
    cts::DeviceMemory onSecond(kSize);
    HAL_REQUIRE_OK(halMemcpy(onSecond.get(), kSize, onFirst.get(), kSize, HAL_MEMCPY_DEFAULT));
    std::vector<uint8_t> result(kSize);
    HAL_REQUIRE_OK(
        halMemcpy(result.data(), kSize, onSecond.get(), kSize, HAL_MEMCPY_DEVICE_TO_HOST));
    CHECK(allBytes(result.data(), kSize, 0x22));
}

TEST_CASE("a copy between devices of one backend is enqueued on either device's stream",
          "[multi_device][memcpy][peer]") {
    CTS_REQUIRE_TWO_DEVICES();
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_PEER_COPY);
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    constexpr size_t kSize = 256 * 1024;
    cts::HostMemory source(kSize), result(kSize);
    for (size_t i = 0; i < kSize; ++i) source.get<uint8_t>()[i] = static_cast<uint8_t>(i * 7 + 3);
    std::memset(result.get(), 0, kSize);
    const auto onFirst = allocateOn(0, kSize);
    const auto onSecond = allocateOn(1, kSize);
    HAL_REQUIRE_OK(halMemcpy(onFirst->get(), kSize, source.get(), kSize, HAL_MEMCPY_DEFAULT));

    const int streamDevice = GENERATE(0, 1);  // the source's, then the destination's
    INFO("stream of device " << streamDevice);
    CurrentDevice current(streamDevice);
    cts::Stream stream;
    cts::Gate gate;
    gate.enqueue(stream);
    const halMemcpyKind kind = GENERATE(HAL_MEMCPY_DEVICE_TO_DEVICE, HAL_MEMCPY_DEFAULT);
    HAL_REQUIRE_OK(halMemcpyAsync(onSecond->get(), kSize, onFirst->get(), kSize, kind, stream));
    // Enqueued behind the gate: no host staging, no wait for the stream.
    CHECK_FALSE(gate.finished());
    CHECK(halQueryStream(stream) == HAL_ERROR_NOT_READY);
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK_FALSE(gate.timedOut());
    HAL_REQUIRE_OK(halMemcpy(result.get(), kSize, onSecond->get(), kSize, HAL_MEMCPY_DEFAULT));
    CHECK(std::memcmp(result.get(), source.get(), kSize) == 0);
}

TEST_CASE("a block a pending copy reads from another device is not handed out again",
          "[multi_device][memcpy][peer][pool]") {
    CTS_REQUIRE_TWO_DEVICES();
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_PEER_COPY);
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    constexpr size_t kSize = 128 * 1024;
    cts::Stream owner;
    void* block = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&block, kSize, owner));
    HAL_REQUIRE_OK(halMemsetAsync(block, kSize, 0x11, kSize, owner));
    HAL_REQUIRE_OK(halSynchronizeStream(owner));
    const auto target = allocateOn(1, kSize);
    std::unique_ptr<cts::Stream> copier;
    cts::Gate gate;
    {
        // The copy runs on device 1, where device 0's pool cannot see the stream.
        CurrentDevice second(1);
        copier = std::make_unique<cts::Stream>();
        gate.enqueue(*copier);
        HAL_REQUIRE_OK(halMemcpyAsync(target->get(), kSize, block, kSize,
                                      HAL_MEMCPY_DEVICE_TO_DEVICE, *copier));
    }
    // Without the copy, `owner` would get the block back at once.
    HAL_REQUIRE_OK(halFreeAsync(block, owner));
    void* again = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&again, kSize, owner));
    CHECK(again != block);
    HAL_REQUIRE_OK(halMemsetAsync(again, kSize, 0x22, kSize, owner));
    HAL_REQUIRE_OK(halSynchronizeStream(owner));
    CHECK_FALSE(gate.finished());
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(*copier));
    cts::HostMemory result(kSize);
    HAL_REQUIRE_OK(halMemcpy(result.get(), kSize, target->get(), kSize, HAL_MEMCPY_DEFAULT));
    CHECK(allBytes(result.get(), kSize, 0x11));
    HAL_REQUIRE_OK(halFreeAsync(again, owner));
}

TEST_CASE("a stream waits for an event of another device", "[multi_device][ordering]") {
    CTS_REQUIRE_TWO_DEVICES();
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Stream first;
    cts::Event reached;
    cts::Gate gate;
    gate.enqueue(first);
    HAL_REQUIRE_OK(halRecordEvent(reached, first));

    CurrentDevice second(1);
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Stream onSecond;
    std::atomic<bool> ran{false};
    HAL_REQUIRE_OK(halStreamWaitEvent(onSecond, reached));
    cts::enqueueSet(onSecond, &ran);
    CHECK(halQueryStream(onSecond) == HAL_ERROR_NOT_READY);
    CHECK_FALSE(ran.load());
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(onSecond));
    CHECK(ran.load());
    CHECK_FALSE(gate.timedOut());
}

TEST_CASE("halSynchronizeDevice waits for the current device only", "[multi_device][sync]") {
    CTS_REQUIRE_TWO_DEVICES();
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Stream first;
    cts::Gate gate;
    gate.enqueue(first);
    {
        CurrentDevice second(1);
        HAL_REQUIRE_OK(halSynchronizeDevice());
    }
    // Had it waited for device 0, the gate would have timed out first.
    CHECK_FALSE(gate.timedOut());
    CHECK(halQueryStream(first) == HAL_ERROR_NOT_READY);
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeDevice());
}

TEST_CASE("resetting one device leaves the other's objects valid", "[multi_device][reset]") {
    CTS_REQUIRE_TWO_DEVICES();
    cts::Stream first;
    cts::Event firstEvent;
    cts::DeviceMemory firstMemory(1024);
    halStream secondStream = nullptr;
    {
        CurrentDevice second(1);
        HAL_REQUIRE_OK(halCreateStream(&secondStream));
    }
    HAL_REQUIRE_OK(halResetDevice(1));
    CHECK(halQueryStream(secondStream) == HAL_ERROR_INVALID_HANDLE);
    HAL_CHECK_OK(halQueryStream(first));
    HAL_CHECK_OK(halRecordEvent(firstEvent, first));
    HAL_CHECK_OK(halSynchronizeEvent(firstEvent));
    HAL_CHECK_OK(halMemset(firstMemory.get(), firstMemory.size(), 0, firstMemory.size()));
}

TEST_CASE("a kernel of one device cannot be launched on another device's stream",
          "[multi_device][kernel]") {
    CTS_REQUIRE_TWO_DEVICES();
    cts::Module module;
    halFunction fill = nullptr;
    if (!cts::loadKernel("fill_u32", module, &fill)) return;
    cts::DeviceMemory out(64 * sizeof(uint32_t));
    void* outPtr = out.get();
    const uint32_t value = 1, n = 64;
    const halKernelArg args[] = {cts::arg(outPtr), cts::arg(value), cts::arg(n)};
    CurrentDevice second(1);
    cts::Stream onSecond;
    CHECK(halLaunchKernel(fill, {1, 1, 1}, {64, 1, 1}, 0, args, 3, onSecond) ==
          HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("peer access is reported per pair, never for a device and itself",
          "[multi_device][peer]") {
    int count = 0, can = -1;
    HAL_REQUIRE_OK(halGetDeviceCount(&count));
    HAL_CHECK_OK(halDeviceCanAccessPeer(&can, 0, 0));
    CHECK(can == 0);
    CHECK(halDeviceCanAccessPeer(nullptr, 0, 0) == HAL_ERROR_INVALID_VALUE);
    CHECK(halDeviceCanAccessPeer(&can, count, 0) == HAL_ERROR_INVALID_DEVICE);
    CHECK(halDeviceCanAccessPeer(&can, 0, -1) == HAL_ERROR_INVALID_DEVICE);
    CHECK(halDeviceEnablePeerAccess(0, 0) == HAL_ERROR_INVALID_DEVICE);
    CHECK(halDeviceEnablePeerAccess(count, 0) == HAL_ERROR_INVALID_DEVICE);
    CHECK(halDeviceDisablePeerAccess(count) == HAL_ERROR_INVALID_DEVICE);
    CTS_REQUIRE_TWO_DEVICES();
    int forward = -1, backward = -1;
    HAL_REQUIRE_OK(halDeviceCanAccessPeer(&forward, 0, 1));
    HAL_REQUIRE_OK(halDeviceCanAccessPeer(&backward, 1, 0));
    CHECK((forward == 0 || forward == 1));
    CHECK((backward == 0 || backward == 1));
    if (cts::deviceProperties().capabilities & HAL_DEVICE_CAP_HOST_ACCESSIBLE) {
        CHECK(forward == 1);  // host memory is reachable from every device
    }
    if (forward == 0) {
        CHECK(halDeviceEnablePeerAccess(1, 0) == HAL_ERROR_NOT_SUPPORTED);
        CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("cannot access device 1"));
    }
}

TEST_CASE("enabled peer access lets a kernel write another device's memory, until disabled",
          "[multi_device][peer][kernel]") {
    CTS_REQUIRE_TWO_DEVICES();
    int can = 0;
    HAL_REQUIRE_OK(halDeviceCanAccessPeer(&can, 0, 1));
    if (can == 0) {
        cts::skip("device 0 cannot access device 1 on this backend");
        return;
    }
    cts::Module module;
    halFunction fill = nullptr;
    if (!cts::loadKernel("fill_u32", module, &fill)) return;
    constexpr uint32_t kCount = 4096;
    void* onSecond = nullptr;
    {
        CurrentDevice second(1);
        HAL_REQUIRE_OK(halMalloc(&onSecond, kCount * sizeof(uint32_t)));
    }
    CHECK(halDeviceEnablePeerAccess(1, 1) == HAL_ERROR_INVALID_VALUE);  // flags must be 0
    CHECK(halDeviceDisablePeerAccess(1) == HAL_ERROR_INVALID_VALUE);    // not enabled yet
    HAL_REQUIRE_OK(halDeviceEnablePeerAccess(1, 0));
    HAL_CHECK_OK(halDeviceEnablePeerAccess(1, 0));  // again: already enabled, no change
    cts::Stream stream;
    const uint32_t value = 0x600d, n = kCount;
    HAL_REQUIRE_OK(
        cts::launch1d(fill, n, 256, {cts::arg(onSecond), cts::arg(value), cts::arg(n)}, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    std::vector<uint32_t> host(kCount);
    HAL_REQUIRE_OK(halMemcpy(host.data(), host.size() * sizeof(uint32_t), onSecond,
                             kCount * sizeof(uint32_t), HAL_MEMCPY_DEVICE_TO_HOST));
    size_t wrong = 0;
    for (uint32_t word : host) wrong += word != value;
    CHECK(wrong == 0);
    HAL_CHECK_OK(halDeviceDisablePeerAccess(1));
    CHECK(halDeviceDisablePeerAccess(1) == HAL_ERROR_INVALID_VALUE);
    HAL_CHECK_OK(halFree(onSecond));
}

TEST_CASE("halResetDevice withdraws the peer access its device was granted",
          "[multi_device][peer]") {
    CTS_REQUIRE_TWO_DEVICES();
    int can = 0;
    HAL_REQUIRE_OK(halDeviceCanAccessPeer(&can, 1, 0));
    if (can == 0) {
        cts::skip("device 1 cannot access device 0 on this backend");
        return;
    }
    CurrentDevice second(1);
    HAL_REQUIRE_OK(halDeviceEnablePeerAccess(0, 0));
    HAL_REQUIRE_OK(halResetDevice(1));
    CHECK(halDeviceDisablePeerAccess(0) == HAL_ERROR_INVALID_VALUE);
}
