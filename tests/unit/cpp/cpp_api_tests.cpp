// <polyhal/polyhal.hpp>: the owning wrappers release what they own, move without double
// release, throw polyhal::Error with the call's code and message, and pack kernel arguments as
// the kernel declares them; TraceRange closes its trace range; a Graph replays its capture.
#include <catch2/catch.hpp>
#include <polyhal/polyhal.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

namespace {

halMemPoolStats poolStats() {
    halMemPoolStats stats = {};
    stats.size = sizeof stats;
    polyhal::check(halMemPoolGetStats(0, &stats), "halMemPoolGetStats");
    return stats;
}

}  // namespace

TEST_CASE("a failing call throws Error with its code, the operation and polyhal's message") {
    try {
        polyhal::Module missing("/nonexistent/kernels.so");
        FAIL("loading a missing file did not throw");
    } catch (const polyhal::Error& error) {
        CHECK(error.code() == HAL_ERROR_INVALID_VALUE);
        const std::string what = error.what();
        CHECK_THAT(what, Catch::StartsWith("halModuleLoadFile: HAL_ERROR_INVALID_VALUE: "));
        CHECK_THAT(what, Catch::Contains("/nonexistent/kernels.so"));
    }
    CHECK_THROWS_AS(polyhal::DeviceBuffer(0), polyhal::Error);
}

TEST_CASE("streams, events and buffers order work across streams and read back right") {
    constexpr size_t kBytes = 64 * 1024;
    polyhal::Stream producer, consumer;
    polyhal::Event ready;
    polyhal::DeviceBuffer data(kBytes, producer);
    polyhal::HostBuffer host(kBytes);
    data.memset(0x5a, producer);
    ready.record(producer);
    consumer.wait(ready);
    polyhal::memcpy(host, data, HAL_MEMCPY_DEVICE_TO_HOST, consumer);
    std::atomic<bool> ran{false};
    consumer.launchHostFunc([&ran] { ran.store(true); });
    consumer.synchronize();
    CHECK(ran.load());
    CHECK(ready.query());
    CHECK(consumer.query());
    const auto* bytes = host.as<unsigned char>();
    size_t wrong = 0;
    for (size_t i = 0; i < kBytes; ++i) wrong += bytes[i] != 0x5a;
    CHECK(wrong == 0);
}

TEST_CASE("destructors release, moves transfer ownership without releasing twice") {
    polyhal::Stream stream;
    const uint64_t before = poolStats().bytesInUse;
    {
        polyhal::DeviceBuffer first(4096, stream);
        void* const address = first.data();
        polyhal::DeviceBuffer second(std::move(first));
        CHECK(first.data() == nullptr);
        CHECK(second.data() == address);
        polyhal::DeviceBuffer third;
        third = std::move(second);
        CHECK(third.data() == address);
        CHECK(poolStats().bytesInUse > before);
    }
    CHECK(poolStats().bytesInUse == before);

    halStream raw = nullptr;
    {
        polyhal::Stream owner;
        raw = owner.get();
        polyhal::Stream moved(std::move(owner));
        CHECK(owner.get() == nullptr);
        CHECK(moved.get() == raw);
        CHECK(halQueryStream(raw) == HAL_SUCCESS);
    }
    CHECK(halQueryStream(raw) == HAL_ERROR_INVALID_HANDLE);

    halStream adopted = nullptr;
    REQUIRE(halCreateStream(&adopted) == HAL_SUCCESS);
    { polyhal::Stream owner = polyhal::Stream::adopt(adopted); }
    CHECK(halQueryStream(adopted) == HAL_ERROR_INVALID_HANDLE);
    { polyhal::Stream defaultStream = polyhal::Stream::defaultStream(); }
    CHECK(halQueryStream(nullptr) == HAL_SUCCESS);
}

TEST_CASE("a query of unfinished work is false, not an exception") {
    polyhal::Stream stream;
    std::atomic<bool> release{false};
    stream.launchHostFunc([&release] {
        while (!release.load()) {
        }
    });
    polyhal::Event marker;
    marker.record(stream);
    CHECK_FALSE(stream.query());
    CHECK_FALSE(marker.query());
    release.store(true);
    marker.synchronize();
    CHECK(stream.query());
}

TEST_CASE("kernel arguments are packed by value with their declared sizes") {
    polyhal::Module module(POLYHAL_CTS_CPU_KERNELS);
    const polyhal::Function fill = module.function("fill_u32");
    constexpr uint32_t kCount = 1000;
    polyhal::Stream stream;
    polyhal::DeviceBuffer out(kCount * sizeof(uint32_t), stream);
    polyhal::HostBuffer host(out.size());
    fill.launch({(kCount + 255) / 256, 1, 1}, {256, 1, 1}, stream, out.as<uint32_t>(), uint32_t{7},
                kCount);
    polyhal::memcpy(host, out, HAL_MEMCPY_DEVICE_TO_HOST, stream);
    stream.synchronize();
    size_t wrong = 0;
    for (uint32_t i = 0; i < kCount; ++i) wrong += host.as<uint32_t>()[i] != 7;
    CHECK(wrong == 0);
    CHECK_THROWS_AS(module.function("no_such_kernel"), polyhal::Error);
}

TEST_CASE("a launch with declared argument access runs the kernel and checks the modes") {
    polyhal::Module module(POLYHAL_CTS_CPU_KERNELS);
    const polyhal::Function fill = module.function("fill_u32");
    constexpr uint32_t kCount = 512;
    polyhal::Stream stream;
    polyhal::DeviceBuffer out(kCount * sizeof(uint32_t), stream);
    polyhal::HostBuffer host(out.size());
    fill.launchWithAccess(
        {kCount / 256, 1, 1}, {256, 1, 1}, stream,
        {HAL_KERNEL_ARG_WRITE_ONLY, HAL_KERNEL_ARG_NO_ACCESS, HAL_KERNEL_ARG_NO_ACCESS},
        out.as<uint32_t>(), uint32_t{9}, kCount);
    polyhal::memcpy(host, out, HAL_MEMCPY_DEVICE_TO_HOST, stream);
    stream.synchronize();
    size_t wrong = 0;
    for (uint32_t i = 0; i < kCount; ++i) wrong += host.as<uint32_t>()[i] != 9;
    CHECK(wrong == 0);
    halKernelArgAccess outside;
    const uint32_t bits = 9;
    std::memcpy(&outside, &bits, sizeof bits);
    try {
        fill.launchWithAccess({1, 1, 1}, {1, 1, 1}, stream,
                              {outside, HAL_KERNEL_ARG_NO_ACCESS, HAL_KERNEL_ARG_NO_ACCESS},
                              out.as<uint32_t>(), uint32_t{9}, uint32_t{1});
        FAIL("an access value outside halKernelArgAccess was accepted");
    } catch (const polyhal::Error& error) {
        CHECK(error.code() == HAL_ERROR_INVALID_VALUE);
    }
}

TEST_CASE("a launch with declared extents writes only its slice") {
    polyhal::Module module(POLYHAL_CTS_CPU_KERNELS);
    const polyhal::Function fill = module.function("fill_u32");
    constexpr uint32_t kCount = 512, kHalf = kCount / 2;
    polyhal::Stream stream;
    polyhal::DeviceBuffer out(kCount * sizeof(uint32_t), stream);
    polyhal::HostBuffer host(out.size());
    fill.launch({kCount / 256, 1, 1}, {256, 1, 1}, stream, out.as<uint32_t>(), uint32_t{1}, kCount);
    fill.launchWithUses({kHalf / 256, 1, 1}, {256, 1, 1}, stream,
                        {{HAL_KERNEL_ARG_WRITE_ONLY, kHalf * sizeof(uint32_t)},
                         {HAL_KERNEL_ARG_NO_ACCESS, 0},
                         {HAL_KERNEL_ARG_NO_ACCESS, 0}},
                        out.as<uint32_t>() + kHalf, uint32_t{2}, kHalf);
    polyhal::memcpy(host, out, HAL_MEMCPY_DEVICE_TO_HOST, stream);
    stream.synchronize();
    size_t wrong = 0;
    for (uint32_t i = 0; i < kCount; ++i) wrong += host.as<uint32_t>()[i] != (i < kHalf ? 1 : 2);
    CHECK(wrong == 0);
}

TEST_CASE("TraceRange closes its range when it goes out of scope, innermost first") {
    {
        polyhal::TraceRange outer("outer");
        { polyhal::TraceRange inner("inner"); }
        CHECK(halTraceRangePop() == HAL_SUCCESS);  // outer's, still open
        CHECK(halTraceRangePush("outer again") == HAL_SUCCESS);
    }
    CHECK(halTraceRangePop() == HAL_ERROR_INVALID_VALUE);  // none left open
    CHECK_THROWS_AS(polyhal::TraceRange(nullptr), polyhal::Error);
}

TEST_CASE("a Graph replays what was submitted between beginCapture and endCapture") {
    constexpr size_t kBytes = 4096;
    polyhal::Stream stream;
    polyhal::DeviceBuffer data(kBytes);
    polyhal::HostBuffer host(kBytes);
    std::atomic<int> runs{0};
    polyhal::Graph::beginCapture(stream);
    CHECK(polyhal::Graph::captureStatus(stream) == HAL_CAPTURE_STATUS_ACTIVE);
    data.memset(0x33, stream);
    polyhal::memcpy(host, data, HAL_MEMCPY_DEVICE_TO_HOST, stream);
    stream.launchHostFunc(
        [](void* counter) { static_cast<std::atomic<int>*>(counter)->fetch_add(1); }, &runs);
    polyhal::Graph graph = polyhal::Graph::endCapture(stream);
    CHECK(polyhal::Graph::captureStatus(stream) == HAL_CAPTURE_STATUS_NONE);
    CHECK(runs.load() == 0);
    graph.launch(stream);
    graph.launch(stream);
    stream.synchronize();
    CHECK(runs.load() == 2);
    CHECK(host.as<unsigned char>()[kBytes - 1] == 0x33);
    CHECK_THROWS_AS(polyhal::Graph::endCapture(stream), polyhal::Error);
}
