// The cuda plugin through polyhal's public API, against the libcuda.so.1 double with two
// devices: what a CUDA application sharing the process with polyhal relies on (its own context
// stays current, devices it never uses cost nothing), and what the CTS cannot see (launch
// arguments checked against the kernel's parameters, releases that wait for no other stream).
#include <cuda.h>
#include <dlfcn.h>
#include <polyhal/hal.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <future>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "every_entry.hpp"
#include "gate.hpp"
#include "graph_scenario.hpp"
#include "kernel_arguments.hpp"
#include "wide_pitch_box.hpp"

namespace {

#define REQUIRE_OK(call)                                                                       \
    do {                                                                                       \
        const halError result_ = (call);                                                       \
        INFO(#call << " -> " << halGetErrorName(result_) << ": " << halGetLastErrorMessage()); \
        REQUIRE(result_ == HAL_SUCCESS);                                                       \
    } while (0)

// The double's own functions, as the application would call the driver.
struct Driver {
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    template <class Fn>
    Fn get(const char* name) const {
        void* symbol = library != nullptr ? dlsym(library, name) : nullptr;
        REQUIRE(symbol != nullptr);
        return reinterpret_cast<Fn>(symbol);
    }
};

const Driver& driver() {
    static const Driver loaded;
    return loaded;
}

int primaryContextRetains(int device) {
    return driver().get<int (*)(int)>("polyhalCudaDoublePrimaryContextRetains")(device);
}

// How often the driver function `name` was called since the process started.
uint64_t driverCalls(const char* name) {
    return driver().get<uint64_t (*)(const char*)>("polyhalCudaDoubleCalls")(name);
}

CUcontext currentContext() {
    CUcontext context = nullptr;
    REQUIRE(driver().get<CUresult (*)(CUcontext*)>("cuCtxGetCurrent")(&context) == CUDA_SUCCESS);
    return context;
}

// A file nvcc built, or "" (the cases that need it then skip) when nvcc was not found.
std::string builtByNvcc(const char* path) {
    if (path == nullptr) {
        WARN("skipped: no CUDA test kernels (nvcc was not found)");
        return {};
    }
    std::ifstream file(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(file), {});
}

#ifndef POLYHAL_CUDA_TEST_KERNELS
#define POLYHAL_CUDA_TEST_KERNELS nullptr
#define POLYHAL_CUDA_TEST_FATBIN nullptr
#endif

// The CTS kernels' PTX.
std::string testKernels() {
    return builtByNvcc(POLYHAL_CUDA_TEST_KERNELS);
}

// The same kernels as nvcc's fatbin (compressed PTX and a cubin).
std::string testFatbin() {
    return builtByNvcc(POLYHAL_CUDA_TEST_FATBIN);
}

}  // namespace

// Runs first: nothing else in this process has used a device yet.
TEST_CASE("halInit retains no device's primary context; first use retains only that device's",
          "[cuda][context]") {
    REQUIRE_OK(halInit());
    int count = 0;
    REQUIRE_OK(halGetDeviceCount(&count));
    REQUIRE(count == 2);
    halDeviceProperties properties{};
    properties.size = sizeof properties;
    REQUIRE_OK(halGetDeviceProperties(1, &properties));
    CHECK(primaryContextRetains(0) == 0);
    CHECK(primaryContextRetains(1) == 0);
    // Not even for a moment: a primary context holds hundreds of MB of device memory, and a
    // device in exclusive-process mode may belong to another process.
    CHECK(driverCalls("cuDevicePrimaryCtxRetain") == 0);

    REQUIRE_OK(halSetDevice(0));
    void* memory = nullptr;
    REQUIRE_OK(halMalloc(&memory, 4096));
    CHECK(primaryContextRetains(0) == 1);
    CHECK(primaryContextRetains(1) == 0);
    REQUIRE_OK(halFree(memory));

    // The priority range is read from the device in use: asking for it is device 1's first use.
    CHECK((properties.capabilities & HAL_DEVICE_CAP_STREAM_PRIORITIES) != 0);
    REQUIRE_OK(halSetDevice(1));
    int least = 1;
    int greatest = 1;
    REQUIRE_OK(halGetStreamPriorityRange(&least, &greatest));
    CHECK(least == 0);
    CHECK(greatest == -5);  // the double's range, as current NVIDIA GPUs report it
    CHECK(primaryContextRetains(1) == 1);
    CHECK(driverCalls("cuDevicePrimaryCtxRetain") == 2);
    REQUIRE_OK(halSetDevice(0));
}

TEST_CASE("every polyhal call leaves the calling thread's CUDA context as it found it",
          "[cuda][context]") {
    REQUIRE_OK(halInit());
    // The application's own context: device 1's primary context, current on this thread, while
    // it uses polyhal on device 0. Then the same with no context current.
    CUcontext own = nullptr;
    REQUIRE(driver().get<CUresult (*)(CUcontext*, CUdevice)>("cuDevicePrimaryCtxRetain")(&own, 1) ==
            CUDA_SUCCESS);
    auto setCurrent = driver().get<CUresult (*)(CUcontext)>("cuCtxSetCurrent");
    for (CUcontext expected : {own, static_cast<CUcontext>(nullptr)}) {
        REQUIRE(setCurrent(expected) == CUDA_SUCCESS);
        polyhal::doubles::callEveryEntry(
            [expected](const char* call) {
                INFO(call);
                CHECK(currentContext() == expected);
            },
            testKernels());
    }
    REQUIRE(driver().get<CUresult (*)(CUdevice)>("cuDevicePrimaryCtxRelease_v2")(1) ==
            CUDA_SUCCESS);
}

TEST_CASE("a stream and an event are released even when their device cannot be made current",
          "[cuda][context]") {
    REQUIRE_OK(halInit());
    REQUIRE_OK(halSetDevice(0));
    halStream stream = nullptr;
    halEvent event = nullptr;
    REQUIRE_OK(halCreateStream(&stream));
    REQUIRE_OK(halCreateEvent(&event));
    // Another context is current, so each call must push device 0's, and that push fails.
    CUcontext own = nullptr;
    REQUIRE(driver().get<CUresult (*)(CUcontext*, CUdevice)>("cuDevicePrimaryCtxRetain")(&own, 1) ==
            CUDA_SUCCESS);
    REQUIRE(driver().get<CUresult (*)(CUcontext)>("cuCtxSetCurrent")(own) == CUDA_SUCCESS);
    auto liveHandles = driver().get<size_t (*)(const char*)>("polyhalCudaDoubleLiveHandles");
    auto failPushes = driver().get<void (*)(int)>("polyhalCudaDoubleFailContextPushes");
    const size_t streams = liveHandles("CUstream");
    const size_t events = liveHandles("CUevent");

    failPushes(1);
    CHECK(halDestroyStream(stream) != HAL_SUCCESS);
    CHECK(liveHandles("CUstream") == streams - 1);
    failPushes(1);
    CHECK(halDestroyEvent(event) != HAL_SUCCESS);
    CHECK(liveHandles("CUevent") == events - 1);
    failPushes(0);
    REQUIRE(driver().get<CUresult (*)(CUcontext)>("cuCtxSetCurrent")(nullptr) == CUDA_SUCCESS);
    REQUIRE(driver().get<CUresult (*)(CUdevice)>("cuDevicePrimaryCtxRelease_v2")(1) ==
            CUDA_SUCCESS);
}

TEST_CASE("launch arguments must match the kernel's parameters in number and size",
          "[cuda][kernel]") {
    const std::string image = testKernels();
    if (!image.empty()) polyhal::doubles::launchArgumentsMustMatchTheKernel(image);
}

namespace {

// block_sum over 256 words whose bytes are all `byte`, launched with `dynamicShared` bytes of
// dynamic shared memory: the sum it wrote.
uint32_t blockSumOfBytes(halFunction sum, size_t dynamicShared, unsigned char byte) {
    void* in = nullptr;
    void* out = nullptr;
    REQUIRE_OK(halMalloc(&in, 256 * sizeof(uint32_t)));
    REQUIRE_OK(halMalloc(&out, sizeof(uint32_t)));
    REQUIRE_OK(halMemset(in, 1024, byte, 1024));
    const uint32_t n = 256;
    const halKernelArg args[] = {{&in, sizeof in}, {&out, sizeof out}, {&n, sizeof n}};
    REQUIRE_OK(halLaunchKernel(sum, halDim3{1, 1, 1}, halDim3{256, 1, 1}, dynamicShared, args, 3,
                               nullptr));
    uint32_t total = 0;
    REQUIRE_OK(halMemcpy(&total, sizeof total, out, sizeof total, HAL_MEMCPY_DEVICE_TO_HOST));
    REQUIRE_OK(halFree(in));
    REQUIRE_OK(halFree(out));
    return total;
}

}  // namespace

TEST_CASE("dynamic shared memory is available up to the device's maximum", "[cuda][kernel]") {
    REQUIRE_OK(halInit());
    REQUIRE_OK(halSetDevice(0));
    halDeviceProperties properties{};
    properties.size = sizeof properties;
    REQUIRE_OK(halGetDeviceProperties(0, &properties));
    CHECK(properties.maxSharedMemoryPerBlock > 48 * 1024);
    const std::string image = testKernels();
    if (image.empty()) return;
    halModule module = nullptr;
    halFunction sum = nullptr;
    REQUIRE_OK(halModuleLoadData(&module, image.data(), image.size()));
    REQUIRE_OK(halModuleGetFunction(&sum, module, "block_sum"));
    CHECK(blockSumOfBytes(sum, properties.maxSharedMemoryPerBlock, 1) == 256u * 0x01010101u);
    REQUIRE_OK(halModuleUnload(module));
}

// Static and dynamic shared memory together get 48 KiB without an opt-in: a kernel with 16 KiB of
// its own must opt in for 40 KiB more.
TEST_CASE("a kernel with static shared memory gets the dynamic shared memory it asks for",
          "[cuda][kernel]") {
    REQUIRE_OK(halInit());
    REQUIRE_OK(halSetDevice(0));
    const std::string image = testKernels();
    if (image.empty()) return;
    setenv("POLYHAL_CUDA_DOUBLE_STATIC_SHARED", "16384", 1);
    halModule module = nullptr;
    halFunction sum = nullptr;
    const halError loaded = halModuleLoadData(&module, image.data(), image.size());
    const halError found =
        loaded == HAL_SUCCESS ? halModuleGetFunction(&sum, module, "block_sum") : loaded;
    unsetenv("POLYHAL_CUDA_DOUBLE_STATIC_SHARED");
    REQUIRE_OK(found);
    CHECK(blockSumOfBytes(sum, 40 * 1024, 2) == 256u * 0x02020202u);
    REQUIRE_OK(halModuleUnload(module));
}

// Another library captures a CUDA graph in global mode on a stream of its own (as PyTorch's CUDA
// graphs do) while polyhal works on another thread: polyhal's queries, allocations and
// synchronisations must neither fail nor invalidate that capture.
TEST_CASE("polyhal's calls leave another library's global capture valid", "[cuda][capture]") {
    REQUIRE_OK(halInit());
    REQUIRE_OK(halSetDevice(0));
    halStream stream = nullptr;
    halEvent event = nullptr;
    REQUIRE_OK(halCreateStream(&stream));
    REQUIRE_OK(halCreateEvent(&event));
    std::promise<void> begun;
    std::promise<void> polyhalDone;
    std::future<CUresult> ended = std::async(std::launch::async, [&] {
        const auto& d = driver();
        CUcontext context = nullptr;
        CUstream captured = nullptr;
        CUgraph graph = nullptr;
        d.get<CUresult (*)(CUcontext*, CUdevice)>("cuDevicePrimaryCtxRetain")(&context, 0);
        d.get<CUresult (*)(CUcontext)>("cuCtxSetCurrent")(context);
        d.get<CUresult (*)(CUstream*, unsigned, int)>("cuStreamCreateWithPriority")(
            &captured, CU_STREAM_NON_BLOCKING, 0);
        const CUresult capturing = d.get<CUresult (*)(CUstream, CUstreamCaptureMode)>(
            "cuStreamBeginCapture_v2")(captured, CU_STREAM_CAPTURE_MODE_GLOBAL);
        begun.set_value();
        polyhalDone.get_future().wait();
        const CUresult result =
            capturing != CUDA_SUCCESS
                ? capturing
                : d.get<CUresult (*)(CUstream, CUgraph*)>("cuStreamEndCapture")(captured, &graph);
        d.get<CUresult (*)(CUstream)>("cuStreamDestroy_v2")(captured);
        d.get<CUresult (*)(CUdevice)>("cuDevicePrimaryCtxRelease_v2")(0);
        return result;
    });
    begun.get_future().wait();
    void* block = nullptr;
    CHECK(halMallocAsync(&block, 1 << 20, stream) == HAL_SUCCESS);
    CHECK(halFreeAsync(block, stream) == HAL_SUCCESS);
    CHECK(halRecordEvent(event, stream) == HAL_SUCCESS);
    // Done or not yet, but asked without failing.
    const halError eventState = halQueryEvent(event);
    CHECK((eventState == HAL_SUCCESS || eventState == HAL_ERROR_NOT_READY));
    const halError streamState = halQueryStream(stream);
    CHECK((streamState == HAL_SUCCESS || streamState == HAL_ERROR_NOT_READY));
    CHECK(halSynchronizeStream(stream) == HAL_SUCCESS);
    CHECK(halSynchronizeDevice() == HAL_SUCCESS);
    polyhalDone.set_value();
    CHECK(ended.get() == CUDA_SUCCESS);
    REQUIRE_OK(halDestroyEvent(event));
    REQUIRE_OK(halDestroyStream(stream));
}

// CUDA 12.1 raised the kernel parameter limit from 4 KiB to 32764 bytes on Volta and newer (the
// double is a Hopper GPU); the driver_11.8 run sees the classic limit.
TEST_CASE("a device reports its driver's kernel parameter limit", "[cuda][kernel_limits]") {
    REQUIRE_OK(halInit());
    int version = 0;
    REQUIRE(driver().get<CUresult (*)(int*)>("cuDriverGetVersion")(&version) == CUDA_SUCCESS);
    halDeviceProperties properties{};
    properties.size = sizeof properties;
    REQUIRE_OK(halGetDeviceProperties(0, &properties));
    CHECK(properties.maxKernelArgumentBytes == (version >= 12010 ? 32764u : 4096u));
}

// What a launch checks is read from the driver once per function, when it is looked up: the
// parameters (cuFuncGetParamInfo, once each) and the shared memory attributes. Launches of a
// function already launched, with as much dynamic shared memory, ask nothing.
TEST_CASE("launches ask the driver nothing about their function after its first launch",
          "[cuda][kernel]") {
    REQUIRE_OK(halInit());
    REQUIRE_OK(halSetDevice(0));
    const std::string image = testKernels();
    if (image.empty()) return;
    halModule module = nullptr;
    halFunction sum = nullptr;
    REQUIRE_OK(halModuleLoadData(&module, image.data(), image.size()));
    REQUIRE_OK(halModuleGetFunction(&sum, module, "block_sum"));
    constexpr size_t kDynamicShared = 64 * 1024;  // above 48 KiB: opted in at the first launch
    CHECK(blockSumOfBytes(sum, kDynamicShared, 1) == 256u * 0x01010101u);
    const uint64_t parameterQueries = driverCalls("cuFuncGetParamInfo");
    const uint64_t attributeQueries = driverCalls("cuFuncGetAttribute");
    const uint64_t attributeChanges = driverCalls("cuFuncSetAttribute");
    for (int launch = 0; launch < 3; ++launch) {
        CHECK(blockSumOfBytes(sum, kDynamicShared, 2) == 256u * 0x02020202u);
        CHECK(blockSumOfBytes(sum, 256 * sizeof(uint32_t), 3) == 256u * 0x03030303u);
    }
    CHECK(driverCalls("cuFuncGetParamInfo") == parameterQueries);
    CHECK(driverCalls("cuFuncGetAttribute") == attributeQueries);
    CHECK(driverCalls("cuFuncSetAttribute") == attributeChanges);
    REQUIRE_OK(halModuleUnload(module));
}

// Releasing memory to the driver must not wait for streams that do not use it: here one stream
// is held by a host function while the pool returns its cache to the driver from this thread.
TEST_CASE("halMemPoolTrim returns while another stream is held", "[cuda][memory]") {
    REQUIRE_OK(halInit());
    REQUIRE_OK(halSetDevice(0));
    REQUIRE_OK(halMemPoolTrim(0, 0));
    halStream held = nullptr;
    halStream user = nullptr;
    REQUIRE_OK(halCreateStream(&held));
    REQUIRE_OK(halCreateStream(&user));
    void* pooled = nullptr;
    REQUIRE_OK(halMallocAsync(&pooled, 1 << 20, user));
    REQUIRE_OK(halFreeAsync(pooled, user));
    REQUIRE_OK(halSynchronizeStream(user));

    polyhal::doubles::Gate gate;
    REQUIRE_OK(halLaunchHostFunc(held, polyhal::doubles::Gate::hold, &gate));
    auto trimmed = std::async(std::launch::async, [] { return halMemPoolTrim(0, 0); });
    const bool returned = trimmed.wait_for(std::chrono::seconds(3)) == std::future_status::ready;
    const bool stillHeld = !gate.open && halQueryStream(held) == HAL_ERROR_NOT_READY;
    gate.open = true;
    // The host function reads the gate until it returns: it must not outlive the gate.
    REQUIRE_OK(halSynchronizeStream(held));
    CHECK(returned);
    CHECK(stillHeld);
    CHECK(trimmed.get() == HAL_SUCCESS);
    halMemPoolStats stats{};
    stats.size = sizeof stats;
    REQUIRE_OK(halMemPoolGetStats(0, &stats));
    CHECK(stats.bytesReserved == 0);
    CHECK(stats.backendFrees == stats.backendAllocations);
    REQUIRE_OK(halDestroyStream(held));
    REQUIRE_OK(halDestroyStream(user));
}

namespace {

uint64_t graphLaunches() {
    return driver().get<uint64_t (*)()>("polyhalCudaDoubleGraphLaunches")();
}

size_t liveUserObjects() {
    return driver().get<size_t (*)(const char*)>("polyhalCudaDoubleLiveHandles")("CUuserObject");
}

}  // namespace

TEST_CASE(
    "a graph of device memory, page-locked memory, kernels and host functions is one "
    "cuGraphLaunch per launch",
    "[cuda][graph][kernel_nodes]") {
    using polyhal::doubles::GraphScenario;
    REQUIRE_OK(halInit());
    REQUIRE_OK(halSetDevice(0));
    const std::string image = testKernels();
    halModule module = nullptr;
    halFunction fill = nullptr;
    if (!image.empty()) {
        REQUIRE_OK(halModuleLoadData(&module, image.data(), image.size()));
        REQUIRE_OK(halModuleGetFunction(&fill, module, "fill_u32"));
    }
    GraphScenario scenario;
    halStream stream = scenario.stream();
    unsigned char* host = scenario.pinned();
    uint32_t value = 7;  // by value: changed after the capture, the graph keeps 7
    const uint32_t n = GraphScenario::kBytes / sizeof(uint32_t);
    halGraph graph = scenario.capture(host, host + GraphScenario::kBytes, [&] {
        if (fill == nullptr) return;
        const halKernelArg args[] = {
            {&scenario.device(), sizeof(void*)}, {&value, sizeof value}, {&n, sizeof n}};
        REQUIRE_OK(halLaunchKernel(fill, {1, 1, 1}, {n, 1, 1}, 0, args, 3, stream));
    });
    value = 9;

    const size_t userObjects = liveUserObjects();
    const uint64_t before = graphLaunches();
    for (int i = 0; i < 3; ++i) REQUIRE_OK(halGraphLaunch(graph, stream));
    REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(graphLaunches() - before == 3);  // native: the core did not replay
    CHECK(scenario.calls() == 3);
    std::vector<uint32_t> words(n);
    std::memcpy(words.data(), host, GraphScenario::kBytes);
    CHECK(words == std::vector<uint32_t>(n, fill != nullptr ? 7u : 0x6B6B6B6Bu));
    GraphScenario::checkBox(host + GraphScenario::kBytes, host);

    // The release waits for the destroy and for the last launch, and does not hold the caller.
    polyhal::doubles::Gate gate;
    REQUIRE_OK(halLaunchHostFunc(stream, polyhal::doubles::Gate::hold, &gate));
    REQUIRE_OK(halGraphLaunch(graph, stream));
    REQUIRE_OK(halGraphDestroy(graph));
    CHECK(liveUserObjects() == userObjects);
    CHECK(scenario.calls() == 3);
    gate.open = true;
    REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(scenario.calls() == 4);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (liveUserObjects() == userObjects && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(liveUserObjects() == userObjects - 1);
    if (module != nullptr) REQUIRE_OK(halModuleUnload(module));
}

TEST_CASE(
    "a copy longer than the device's maximum pitch is launched natively, as several copy nodes",
    "[cuda][graph]") {
    REQUIRE_OK(halInit());
    REQUIRE_OK(halSetDevice(0));
    int maxPitch = 0;
    REQUIRE(driver().get<CUresult (*)(int*, CUdevice_attribute, CUdevice)>("cuDeviceGetAttribute")(
                &maxPitch, CU_DEVICE_ATTRIBUTE_MAX_PITCH, 0) == CUDA_SUCCESS);
    const size_t bytes = 2 * static_cast<size_t>(maxPitch) + 4099;  // two whole rows and a part
    halStream stream = nullptr;
    REQUIRE_OK(halCreateStream(&stream));
    void* from = nullptr;
    void* to = nullptr;
    void* host = nullptr;
    REQUIRE_OK(halMalloc(&from, bytes));
    REQUIRE_OK(halMalloc(&to, bytes));
    REQUIRE_OK(halMallocHost(&host, bytes));
    auto* pattern = static_cast<unsigned char*>(host);
    for (size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<unsigned char>(i * 7 + i / 251);
    const std::vector<unsigned char> expected(pattern, pattern + bytes);
    REQUIRE_OK(halMemcpy(from, bytes, host, bytes, HAL_MEMCPY_HOST_TO_DEVICE));
    std::memset(host, 0, bytes);

    REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    REQUIRE_OK(halMemcpyAsync(to, bytes, from, bytes, HAL_MEMCPY_DEVICE_TO_DEVICE, stream));
    REQUIRE_OK(halMemcpyAsync(host, bytes, to, bytes, HAL_MEMCPY_DEVICE_TO_HOST, stream));
    halGraph graph = nullptr;
    REQUIRE_OK(halStreamEndCapture(stream, &graph));
    const uint64_t before = graphLaunches();
    REQUIRE_OK(halGraphLaunch(graph, stream));
    REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(graphLaunches() - before == 1);  // the driver refuses rows wider than the pitch limit
    CHECK(std::vector<unsigned char>(pattern, pattern + bytes) == expected);
    REQUIRE_OK(halGraphDestroy(graph));
    REQUIRE_OK(halFreeHost(host));
    REQUIRE_OK(halFree(to));
    REQUIRE_OK(halFree(from));
    REQUIRE_OK(halDestroyStream(stream));
}

TEST_CASE("a box whose pitches pass the device's maximum is copied, eagerly and natively",
          "[cuda][graph]") {
    int maxPitch = 0;
    REQUIRE(driver().get<CUresult (*)(int*, CUdevice_attribute, CUdevice)>("cuDeviceGetAttribute")(
                &maxPitch, CU_DEVICE_ATTRIBUTE_MAX_PITCH, 0) == CUDA_SUCCESS);
    polyhal::doubles::copyWidePitchBox(static_cast<size_t>(maxPitch), graphLaunches);
}

TEST_CASE("a graph that copies pageable host memory is replayed, with the eager results",
          "[cuda][graph]") {
    REQUIRE_OK(halInit());
    REQUIRE_OK(halSetDevice(0));
    halStream stream = nullptr;
    REQUIRE_OK(halCreateStream(&stream));
    void* device = nullptr;
    REQUIRE_OK(halMalloc(&device, 256));
    std::vector<unsigned char> pageable(256, 0);
    REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    REQUIRE_OK(halMemsetAsync(device, 256, 0x33, 256, stream));
    REQUIRE_OK(
        halMemcpyAsync(pageable.data(), 256, device, 256, HAL_MEMCPY_DEVICE_TO_HOST, stream));
    halGraph graph = nullptr;
    REQUIRE_OK(halStreamEndCapture(stream, &graph));
    const uint64_t before = graphLaunches();
    REQUIRE_OK(halGraphLaunch(graph, stream));
    REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(graphLaunches() == before);
    CHECK(pageable == std::vector<unsigned char>(256, 0x33));
    REQUIRE_OK(halGraphDestroy(graph));
    REQUIRE_OK(halFree(device));
    REQUIRE_OK(halDestroyStream(stream));
}

TEST_CASE("a graph whose build fails part-way leaves no driver graph behind", "[cuda][graph]") {
    REQUIRE_OK(halInit());
    REQUIRE_OK(halSetDevice(0));
    const std::string image = testKernels();
    if (image.empty()) return;
    halModule module = nullptr;
    halFunction fill = nullptr;
    REQUIRE_OK(halModuleLoadData(&module, image.data(), image.size()));
    REQUIRE_OK(halModuleGetFunction(&fill, module, "fill_u32"));
    halStream stream = nullptr;
    REQUIRE_OK(halCreateStream(&stream));
    void* out = nullptr;
    REQUIRE_OK(halMalloc(&out, 256));
    auto liveHandles = driver().get<size_t (*)(const char*)>("polyhalCudaDoubleLiveHandles");
    const size_t graphs = liveHandles("CUgraph");
    const size_t userObjects = liveHandles("CUuserObject");
    // The kernel's second parameter is 4 bytes: the build adds the memset node, then refuses
    // the kernel as the eager launch refuses it.
    const uint64_t wideValue = 5;
    const uint32_t n = 64;
    const halKernelArg wrongSize[] = {
        {&out, sizeof out}, {&wideValue, sizeof wideValue}, {&n, sizeof n}};
    REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    REQUIRE_OK(halMemsetAsync(out, 256, 0, 256, stream));
    REQUIRE_OK(halLaunchKernel(fill, {1, 1, 1}, {64, 1, 1}, 0, wrongSize, 3, stream));
    halGraph graph = nullptr;
    REQUIRE_OK(halStreamEndCapture(stream, &graph));  // the core replays it
    CHECK(liveHandles("CUgraph") == graphs);
    CHECK(liveHandles("CUuserObject") == userObjects);
    const uint64_t before = graphLaunches();
    CHECK(halGraphLaunch(graph, stream) == HAL_ERROR_INVALID_VALUE);  // the replayed launch's
    CHECK(graphLaunches() == before);
    REQUIRE_OK(halSynchronizeStream(stream));
    REQUIRE_OK(halGraphDestroy(graph));
    REQUIRE_OK(halFree(out));
    REQUIRE_OK(halDestroyStream(stream));
    REQUIRE_OK(halModuleUnload(module));
}

// The driver's loader takes no size and trusts the image's headers: the plugin checks them.
TEST_CASE(
    "a cubin or fatbin whose headers point past its end is refused before the driver reads it",
    "[cuda][module]") {
    REQUIRE_OK(halInit());
    REQUIRE_OK(halSetDevice(0));
    halModule module = nullptr;

    // A 64-bit ELF header whose program header table lies 1 MiB into a 64-byte image.
    std::vector<unsigned char> cubin(64, 0);
    const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    std::memcpy(cubin.data(), ident, sizeof ident);
    const uint64_t farAway = 1 << 20;
    const uint16_t entrySize = 56;
    const uint16_t entries = 2;
    std::memcpy(cubin.data() + 0x20, &farAway, sizeof farAway);
    std::memcpy(cubin.data() + 0x36, &entrySize, sizeof entrySize);
    std::memcpy(cubin.data() + 0x38, &entries, sizeof entries);
    CHECK(halModuleLoadData(&module, cubin.data(), cubin.size()) == HAL_ERROR_INVALID_IMAGE);
    CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("program header table runs past"));

    // A fatbin header that says 4 KiB of entries follow it, in a 16-byte image.
    struct {
        uint32_t magic = 0xBA55ED50;
        uint16_t version = 1;
        uint16_t headerSize = 16;
        uint64_t fatSize = 4096;
    } fatbin;
    CHECK(halModuleLoadData(&module, &fatbin, sizeof fatbin) == HAL_ERROR_INVALID_IMAGE);
    CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("truncated fatbin"));

    // A fatbin of one entry that says its payload is 1 MiB, in 40 bytes of entries.
    std::vector<unsigned char> shortEntry(16 + 40, 0);
    const uint32_t magic = 0xBA55ED50;
    const uint16_t version = 1, headerSize = 16, kind = 2, entryVersion = 0x0101;
    const uint64_t fatSize = 40, payload = 1 << 20;
    const uint32_t entryHeaderSize = 40;
    std::memcpy(shortEntry.data(), &magic, 4);
    std::memcpy(shortEntry.data() + 4, &version, 2);
    std::memcpy(shortEntry.data() + 6, &headerSize, 2);
    std::memcpy(shortEntry.data() + 8, &fatSize, 8);
    std::memcpy(shortEntry.data() + 16, &kind, 2);
    std::memcpy(shortEntry.data() + 18, &entryVersion, 2);
    std::memcpy(shortEntry.data() + 20, &entryHeaderSize, 4);
    std::memcpy(shortEntry.data() + 24, &payload, 8);
    CHECK(halModuleLoadData(&module, shortEntry.data(), shortEntry.size()) ==
          HAL_ERROR_INVALID_IMAGE);
    CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("an entry runs past its end"));

    // nvcc's own fatbin passes the same checks.
    const std::string fatbinImage = testFatbin();
    if (fatbinImage.empty()) return;
    REQUIRE_OK(halModuleLoadData(&module, fatbinImage.data(), fatbinImage.size()));
    REQUIRE_OK(halModuleUnload(module));
}
