// halLaunchKernel with the CTS kernels: results over many blocks, shared memory, grids, argument
// copying, ordering across streams, launch validation and asynchronous kernel failures.
#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "kernels.hpp"

using namespace std::chrono_literals;

namespace {

template <typename T>
std::vector<T> download(const cts::DeviceMemory& memory) {
    std::vector<T> host(memory.size() / sizeof(T));
    HAL_REQUIRE_OK(halMemcpy(host.data(), memory.size(), memory.get(), memory.size(),
                             HAL_MEMCPY_DEVICE_TO_HOST));
    return host;
}

template <typename T>
void upload(const cts::DeviceMemory& memory, const std::vector<T>& host) {
    REQUIRE(host.size() * sizeof(T) == memory.size());
    HAL_REQUIRE_OK(halMemcpy(memory.get(), memory.size(), host.data(), memory.size(),
                             HAL_MEMCPY_HOST_TO_DEVICE));
}

}  // namespace

TEST_CASE("fill_u32 over many blocks writes exactly its elements", "[kernel]") {
    cts::Module module;
    halFunction fill = nullptr;
    if (!cts::loadKernel("fill_u32", module, &fill)) return;
    constexpr uint32_t kCount = 1000, kGuard = 24;
    cts::DeviceMemory out((kCount + kGuard) * sizeof(uint32_t));
    HAL_REQUIRE_OK(halMemset(out.get(), out.size(), 0xFF, out.size()));
    void* outPtr = out.get();
    const uint32_t value = 0x12345678u, n = kCount;
    cts::Stream stream;
    HAL_REQUIRE_OK(
        cts::launch1d(fill, n, 64, {cts::arg(outPtr), cts::arg(value), cts::arg(n)}, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    const auto result = download<uint32_t>(out);
    for (uint32_t i = 0; i < kCount + kGuard; ++i) {
        INFO("element " << i);
        REQUIRE(result[i] == (i < kCount ? value : 0xFFFFFFFFu));
    }
}

TEST_CASE("vadd adds vectors across blocks", "[kernel]") {
    cts::Module module;
    halFunction vadd = nullptr;
    if (!cts::loadKernel("vadd", module, &vadd)) return;
    constexpr uint32_t kCount = 3000;
    std::vector<float> a(kCount), b(kCount);
    for (uint32_t i = 0; i < kCount; ++i) {
        a[i] = static_cast<float>(i);
        b[i] = static_cast<float>(2 * i);
    }
    cts::DeviceMemory da(kCount * sizeof(float)), db(kCount * sizeof(float)),
        dc(kCount * sizeof(float));
    upload(da, a);
    upload(db, b);
    void *pa = da.get(), *pb = db.get(), *pc = dc.get();
    const uint32_t n = kCount;
    cts::Stream stream;
    HAL_REQUIRE_OK(cts::launch1d(vadd, n, 128,
                                 {cts::arg(pa), cts::arg(pb), cts::arg(pc), cts::arg(n)}, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    const auto c = download<float>(dc);
    for (uint32_t i = 0; i < kCount; ++i) REQUIRE(c[i] == static_cast<float>(3 * i));
}

TEST_CASE("block_sum stages each block through dynamic shared memory", "[kernel]") {
    cts::Module module;
    halFunction blockSum = nullptr;
    if (!cts::loadKernel("block_sum", module, &blockSum)) return;
    constexpr uint32_t kCount = 1000, kBlock = 128, kBlocks = (kCount + kBlock - 1) / kBlock;
    REQUIRE(cts::deviceProperties().maxSharedMemoryPerBlock >= kBlock * sizeof(uint32_t));
    std::vector<uint32_t> input(kCount);
    for (uint32_t i = 0; i < kCount; ++i) input[i] = i + 1;
    cts::DeviceMemory din(kCount * sizeof(uint32_t)), dout(kBlocks * sizeof(uint32_t));
    upload(din, input);
    void *pin = din.get(), *pout = dout.get();
    const uint32_t n = kCount;
    cts::Stream stream;
    HAL_REQUIRE_OK(cts::launch1d(blockSum, n, kBlock, {cts::arg(pin), cts::arg(pout), cts::arg(n)},
                                 stream, kBlock * sizeof(uint32_t)));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    const auto sums = download<uint32_t>(dout);
    for (uint32_t block = 0; block < kBlocks; ++block) {
        uint32_t expected = 0;
        for (uint32_t i = block * kBlock; i < std::min(kCount, (block + 1) * kBlock); ++i) {
            expected += input[i];
        }
        INFO("block " << block);
        CHECK(sums[block] == expected);
    }
}

TEST_CASE("every block of a three-dimensional grid runs once", "[kernel]") {
    cts::Module module;
    halFunction blockIndex = nullptr;
    if (!cts::loadKernel("block_index", module, &blockIndex)) return;
    const halDim3 grid{5, 3, 4};
    const uint32_t blocks = grid.x * grid.y * grid.z;
    cts::DeviceMemory out(blocks * sizeof(uint32_t));
    HAL_REQUIRE_OK(halMemset(out.get(), out.size(), 0, out.size()));
    void* outPtr = out.get();
    const halKernelArg args[] = {cts::arg(outPtr)};
    HAL_REQUIRE_OK(halLaunchKernel(blockIndex, grid, {2, 2, 1}, 0, args, 1, nullptr));
    HAL_REQUIRE_OK(halSynchronizeStream(nullptr));
    const auto result = download<uint32_t>(out);
    for (uint32_t i = 0; i < blocks; ++i) REQUIRE(result[i] == i + 1);
}

TEST_CASE("kernel arguments are copied at launch", "[kernel]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Module module;
    halFunction fill = nullptr;
    if (!cts::loadKernel("fill_u32", module, &fill)) return;
    constexpr uint32_t kCount = 256;
    cts::DeviceMemory out(kCount * sizeof(uint32_t));
    void* outPtr = out.get();
    uint32_t value = 11, n = kCount;
    cts::Stream stream;
    cts::Gate gate;
    gate.enqueue(stream);
    {
        const halKernelArg args[] = {cts::arg(outPtr), cts::arg(value), cts::arg(n)};
        HAL_REQUIRE_OK(halLaunchKernel(fill, {kCount / 64, 1, 1}, {64, 1, 1}, 0, args, 3, stream));
    }
    value = 99;  // the launch has not run yet (the gate holds the stream)
    n = 0;
    outPtr = nullptr;
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(download<uint32_t>(out) == std::vector<uint32_t>(kCount, 11));
}

TEST_CASE("a launch with declared argument access runs as halLaunchKernel does", "[kernel]") {
    cts::Module module;
    halFunction fill = nullptr;
    if (!cts::loadKernel("fill_u32", module, &fill)) return;
    constexpr uint32_t kCount = 512;
    cts::DeviceMemory out(kCount * sizeof(uint32_t));
    HAL_REQUIRE_OK(halMemset(out.get(), out.size(), 0, out.size()));
    void* outPtr = out.get();
    const uint32_t value = 0xC0FFEEu, n = kCount;
    const halKernelArg args[] = {cts::arg(outPtr), cts::arg(value), cts::arg(n)};
    const halKernelArgAccess access[] = {HAL_KERNEL_ARG_WRITE_ONLY, HAL_KERNEL_ARG_NO_ACCESS,
                                         HAL_KERNEL_ARG_NO_ACCESS};
    cts::Stream stream;
    HAL_REQUIRE_OK(halLaunchKernelWithAccess(fill, {kCount / 64, 1, 1}, {64, 1, 1}, 0, args, access,
                                             3, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(download<uint32_t>(out) == std::vector<uint32_t>(kCount, value));
    // No access array: every argument read and write, as halLaunchKernel.
    const uint32_t second = 7;
    const halKernelArg again[] = {cts::arg(outPtr), cts::arg(second), cts::arg(n)};
    HAL_REQUIRE_OK(halLaunchKernelWithAccess(fill, {kCount / 64, 1, 1}, {64, 1, 1}, 0, again,
                                             nullptr, 3, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(download<uint32_t>(out) == std::vector<uint32_t>(kCount, second));
    // Declared extents: the second half of the buffer, written through a pointer into it.
    void* half = static_cast<uint32_t*>(outPtr) + kCount / 2;
    const uint32_t third = 9, halfCount = kCount / 2;
    const halKernelArg slice[] = {cts::arg(half), cts::arg(third), cts::arg(halfCount)};
    const halKernelArgUse uses[] = {{HAL_KERNEL_ARG_WRITE_ONLY, halfCount * sizeof(uint32_t)},
                                    {HAL_KERNEL_ARG_NO_ACCESS, 0},
                                    {HAL_KERNEL_ARG_NO_ACCESS, 0}};
    HAL_REQUIRE_OK(halLaunchKernelWithUses(fill, {halfCount / 64, 1, 1}, {64, 1, 1}, 0, slice, uses,
                                           3, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    std::vector<uint32_t> expected(kCount, second);
    std::fill(expected.begin() + kCount / 2, expected.end(), third);
    CHECK(download<uint32_t>(out) == expected);
}

TEST_CASE("kernels on two streams ordered by an event", "[kernel][ordering]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Module module;
    halFunction vadd = nullptr;
    if (!cts::loadKernel("vadd", module, &vadd)) return;
    constexpr uint32_t kCount = 4096;
    std::vector<float> a(kCount, 1.5f), b(kCount, 2.0f);
    cts::DeviceMemory da(kCount * sizeof(float)), db(kCount * sizeof(float)),
        dc(kCount * sizeof(float)), dd(kCount * sizeof(float));
    upload(da, a);
    upload(db, b);
    void *pa = da.get(), *pb = db.get(), *pc = dc.get(), *pd = dd.get();
    const uint32_t n = kCount;
    cts::Stream producer, consumer;
    cts::Event produced;
    cts::Gate gate;
    gate.enqueue(producer);
    HAL_REQUIRE_OK(cts::launch1d(
        vadd, n, 256, {cts::arg(pa), cts::arg(pb), cts::arg(pc), cts::arg(n)}, producer));
    HAL_REQUIRE_OK(halRecordEvent(produced, producer));
    HAL_REQUIRE_OK(halStreamWaitEvent(consumer, produced));
    HAL_REQUIRE_OK(cts::launch1d(
        vadd, n, 256, {cts::arg(pc), cts::arg(pc), cts::arg(pd), cts::arg(n)}, consumer));
    CHECK(halQueryStream(consumer) == HAL_ERROR_NOT_READY);
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(consumer));
    CHECK(download<float>(dd) == std::vector<float>(kCount, 7.0f));
    HAL_REQUIRE_OK(halSynchronizeStream(producer));
}

TEST_CASE("halLaunchKernel validates the launch", "[kernel][errors]") {
    cts::Module module;
    halFunction fill = nullptr;
    if (!cts::loadKernel("fill_u32", module, &fill)) return;
    const halDeviceProperties props = cts::deviceProperties();
    cts::DeviceMemory out(256);
    void* outPtr = out.get();
    const uint32_t value = 1, n = 64;
    const halKernelArg args[] = {cts::arg(outPtr), cts::arg(value), cts::arg(n)};
    const halDim3 one{1, 1, 1};

    for (const halDim3 zero : {halDim3{0, 1, 1}, halDim3{1, 0, 1}, halDim3{1, 1, 0}}) {
        CHECK(halLaunchKernel(fill, zero, one, 0, args, 3, nullptr) == HAL_ERROR_INVALID_VALUE);
        CHECK(halLaunchKernel(fill, one, zero, 0, args, 3, nullptr) == HAL_ERROR_INVALID_VALUE);
    }
    if (props.maxThreadsPerBlock < UINT32_MAX) {
        CHECK(halLaunchKernel(fill, one, {props.maxThreadsPerBlock + 1, 1, 1}, 0, args, 3,
                              nullptr) == HAL_ERROR_INVALID_VALUE);
        CHECK(halLaunchKernel(fill, one, {props.maxThreadsPerBlock, 2, 1}, 0, args, 3, nullptr) ==
              HAL_ERROR_INVALID_VALUE);
    }
    CHECK(halLaunchKernel(fill, one, one, props.maxSharedMemoryPerBlock + 1, args, 3, nullptr) ==
          HAL_ERROR_INVALID_VALUE);
    CHECK(halLaunchKernel(fill, one, one, 0, nullptr, 3, nullptr) == HAL_ERROR_INVALID_VALUE);
    const halKernelArg noValue[] = {{nullptr, sizeof(void*)}, cts::arg(value), cts::arg(n)};
    CHECK(halLaunchKernel(fill, one, one, 0, noValue, 3, nullptr) == HAL_ERROR_INVALID_VALUE);
    const halKernelArg noSize[] = {{&outPtr, 0}, cts::arg(value), cts::arg(n)};
    CHECK(halLaunchKernel(fill, one, one, 0, noSize, 3, nullptr) == HAL_ERROR_INVALID_VALUE);

    halStream destroyed = nullptr;
    HAL_REQUIRE_OK(halCreateStream(&destroyed));
    HAL_REQUIRE_OK(halDestroyStream(destroyed));
    CHECK(halLaunchKernel(fill, one, one, 0, args, 3, destroyed) == HAL_ERROR_INVALID_HANDLE);
    HAL_CHECK_OK(halSynchronizeDevice());
}

TEST_CASE("halQueryStream answers after a failure the backend keeps",
          "[kernel][errors][kept_failure]") {
    halError again = HAL_SUCCESS;
    {
        cts::Module module;
        halFunction failing = nullptr;
        if (!cts::loadKernel("fail_with_code", module, &failing)) return;
        cts::Stream stream;
        HAL_REQUIRE_OK(halLaunchKernel(failing, {2, 1, 1}, {1, 1, 1}, 0, nullptr, 0, stream));
        halError status = HAL_ERROR_NOT_READY;
        cts::waitUntil([&] { return (status = halQueryStream(stream)) != HAL_ERROR_NOT_READY; });
        CHECK(status == HAL_ERROR_LAUNCH_FAILED);
        // Reported once. A backend whose vendor keeps the failure (a CUDA context after a trap)
        // reports the vendor's error again, any other an idle stream: either way it answers.
        again = halQueryStream(stream);
        CHECK((again == HAL_SUCCESS || again == HAL_ERROR_LAUNCH_FAILED));
    }
    // A backend that keeps the failure cannot run anything more in this process: its skip list
    // names this case, which runs alone (cts.<backend>.kept_failure).
    if (again == HAL_ERROR_LAUNCH_FAILED) return;
    cts::Stream fresh;
    HAL_CHECK_OK(halSynchronizeStream(fresh));
}

TEST_CASE("a failing kernel surfaces LAUNCH_FAILED once, at synchronisation", "[kernel][errors]") {
    cts::Module module;
    halFunction failing = nullptr, fill = nullptr;
    if (!cts::loadKernel("fail_with_code", module, &failing)) return;
    HAL_REQUIRE_OK(halModuleGetFunction(&fill, module.get(), "fill_u32"));
    cts::Stream stream;
    HAL_REQUIRE_OK(halLaunchKernel(failing, {2, 1, 1}, {1, 1, 1}, 0, nullptr, 0, stream));

    SECTION("halSynchronizeStream reports it, then the stream works again") {
        REQUIRE(halSynchronizeStream(stream) == HAL_ERROR_LAUNCH_FAILED);
        const std::string message = halGetLastErrorMessage();
        CHECK_THAT(message, Catch::Contains("fail_with_code"));
        if (cts::backendName() == "cpu") CHECK_THAT(message, Catch::Contains("7"));
        HAL_CHECK_OK(halSynchronizeStream(stream));
        HAL_CHECK_OK(halSynchronizeDevice());

        cts::DeviceMemory out(64 * sizeof(uint32_t));
        void* outPtr = out.get();
        const uint32_t value = 3, n = 64;
        HAL_REQUIRE_OK(
            cts::launch1d(fill, n, 32, {cts::arg(outPtr), cts::arg(value), cts::arg(n)}, stream));
        HAL_REQUIRE_OK(halSynchronizeStream(stream));
        CHECK(download<uint32_t>(out) == std::vector<uint32_t>(64, 3));
    }
    SECTION("halQueryStream reports it") {
        halError status = HAL_ERROR_NOT_READY;
        cts::waitUntil([&] { return (status = halQueryStream(stream)) != HAL_ERROR_NOT_READY; });
        CHECK(status == HAL_ERROR_LAUNCH_FAILED);
        CHECK_THAT(std::string(halGetLastErrorMessage()), Catch::Contains("fail_with_code"));
    }
    SECTION("an event recorded after the failure reports completion; the stream, the failure") {
        cts::Event event;
        HAL_REQUIRE_OK(halRecordEvent(event, stream));
        HAL_CHECK_OK(halSynchronizeEvent(event));
        CHECK(halSynchronizeStream(stream) == HAL_ERROR_LAUNCH_FAILED);
    }
    SECTION("halSynchronizeDevice reports it") {
        CHECK(halSynchronizeDevice() == HAL_ERROR_LAUNCH_FAILED);
        CHECK_THAT(std::string(halGetLastErrorMessage()), Catch::Contains("fail_with_code"));
    }
    // Observe whatever a section left unreported, so that later tests start clean.
    halSynchronizeStream(stream);
    halSynchronizeDevice();
}

TEST_CASE("a module unloaded while its kernel is queued still runs it", "[kernel][module]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Module module;
    halFunction fill = nullptr;
    if (!cts::loadKernel("fill_u32", module, &fill)) return;
    constexpr uint32_t kCount = 128;
    cts::DeviceMemory out(kCount * sizeof(uint32_t));
    void* outPtr = out.get();
    const uint32_t value = 5, n = kCount;
    cts::Stream stream;
    cts::Gate gate;
    gate.enqueue(stream);
    HAL_REQUIRE_OK(
        cts::launch1d(fill, n, 64, {cts::arg(outPtr), cts::arg(value), cts::arg(n)}, stream));
    // halModuleUnload may wait for the queued launch, so the gate opens from another thread.
    std::thread opener([&] {
        std::this_thread::sleep_for(50ms);
        gate.open();
    });
    const halError unloaded = halModuleUnload(module.release());
    opener.join();
    HAL_CHECK_OK(unloaded);
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(download<uint32_t>(out) == std::vector<uint32_t>(kCount, 5));
}
