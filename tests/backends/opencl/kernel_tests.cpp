// Kernel launches with the conformance kernels (backends/opencl/cts_kernels/cts_kernels.cl).
#include <algorithm>
#include <memory>
#include <thread>

#include "plugin_fixture.hpp"

using namespace opencl_test;

namespace {

template <class T>
halKernelArg arg(const T& value) {
    return {&value, sizeof value};
}

void launch1d(const Stream& stream, halPluginFunction function, uint32_t n, uint32_t block,
              const std::vector<halKernelArg>& args, size_t dynamicSharedBytes = 0) {
    REQUIRE_OK(plugin().launchKernel(stream.get(), function, {(n + block - 1) / block, 1, 1},
                                     {block, 1, 1}, dynamicSharedBytes, args.data(),
                                     static_cast<uint32_t>(args.size())));
}

}  // namespace

TEST_CASE("vadd adds two vectors of device memory") {
    Stream stream;
    const uint32_t n = 1000;
    std::vector<float> a(n), b(n);
    for (uint32_t i = 0; i < n; ++i) {
        a[i] = static_cast<float>(i);
        b[i] = static_cast<float>(2 * i) + 0.25f;
    }
    DeviceMemory da(n * sizeof(float)), db(n * sizeof(float)), dc(n * sizeof(float));
    upload(stream, da.get(), a);
    upload(stream, db.get(), b);
    void *pa = da.get(), *pb = db.get(), *pc = dc.get();
    launch1d(stream, ctsKernel("vadd"), n, 64, {arg(pa), arg(pb), arg(pc), arg(n)});
    const std::vector<float> c = download<float>(stream, dc.get(), n);
    for (uint32_t i = 0; i < n; ++i) CHECK(c[i] == a[i] + b[i]);
}

TEST_CASE("a pointer into the middle of an allocation is a valid kernel argument") {
    Stream stream;
    const uint32_t total = 512, offset = 100, n = 300, value = 0xC0FFEE;
    DeviceMemory memory(total * sizeof(uint32_t));
    upload(stream, memory.get(), std::vector<uint32_t>(total, 0));
    void* inner = memory.as<uint32_t>() + offset;
    launch1d(stream, ctsKernel("fill_u32"), n, 32, {arg(inner), arg(value), arg(n)});
    const std::vector<uint32_t> result = download<uint32_t>(stream, memory.get(), total);
    for (uint32_t i = 0; i < total; ++i) {
        INFO("element " << i);
        CHECK(result[i] == (i >= offset && i < offset + n ? value : 0u));
    }
}

TEST_CASE("dynamic shared memory is the kernel's last __local parameter") {
    Stream stream;
    const uint32_t n = 250, block = 64, blocks = (n + block - 1) / block;
    std::vector<uint32_t> input(n);
    for (uint32_t i = 0; i < n; ++i) input[i] = i + 1;
    DeviceMemory in(n * sizeof(uint32_t)), out(blocks * sizeof(uint32_t));
    upload(stream, in.get(), input);
    void *pin = in.get(), *pout = out.get();
    launch1d(stream, ctsKernel("block_sum"), n, block, {arg(pin), arg(pout), arg(n)},
             block * sizeof(uint32_t));
    const std::vector<uint32_t> sums = download<uint32_t>(stream, out.get(), blocks);
    for (uint32_t b = 0; b < blocks; ++b) {
        uint32_t expected = 0;
        for (uint32_t i = b * block; i < std::min(n, (b + 1) * block); ++i) expected += input[i];
        CHECK(sums[b] == expected);
    }
}

TEST_CASE("a three-dimensional grid runs every block once") {
    Stream stream;
    const halDim3 grid{3, 2, 4}, block{2, 2, 2};
    const uint32_t blocks = grid.x * grid.y * grid.z;
    DeviceMemory out(blocks * sizeof(uint32_t));
    upload(stream, out.get(), std::vector<uint32_t>(blocks, 0));
    void* pout = out.get();
    const halKernelArg args[] = {arg(pout)};
    REQUIRE_OK(
        plugin().launchKernel(stream.get(), ctsKernel("block_index"), grid, block, 0, args, 1));
    const std::vector<uint32_t> result = download<uint32_t>(stream, out.get(), blocks);
    for (uint32_t i = 0; i < blocks; ++i) CHECK(result[i] == i + 1);
}

TEST_CASE("kernels use page-locked host memory directly where the device shares it") {
    cl_device_svm_capabilities svm = 0;
    REQUIRE(clGetDeviceInfo(clDevice(), CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, nullptr) ==
            CL_SUCCESS);
    if (!(svm & CL_DEVICE_SVM_FINE_GRAIN_BUFFER)) {
        WARN("the device has no fine-grain SVM buffers; host memory is plain host memory");
        return;
    }
    Stream stream;
    const uint32_t n = 100, value = 77;
    void* host = nullptr;
    REQUIRE_OK(plugin().memAllocHost(device(), n * sizeof(uint32_t), &host));
    launch1d(stream, ctsKernel("fill_u32"), n, 16, {arg(host), arg(value), arg(n)});
    stream.synchronize();
    for (uint32_t i = 0; i < n; ++i) CHECK(static_cast<uint32_t*>(host)[i] == value);
    REQUIRE_OK(plugin().memFreeHost(device(), host));
}

TEST_CASE("a launch with the wrong number of arguments is HAL_ERROR_INVALID_VALUE") {
    Stream stream;
    DeviceMemory memory(64);
    void* ptr = memory.get();
    const uint32_t value = 1;
    const halKernelArg args[] = {arg(ptr), arg(value)};
    CHECK(plugin().launchKernel(stream.get(), ctsKernel("fill_u32"), {1, 1, 1}, {1, 1, 1}, 0, args,
                                2) == HAL_ERROR_INVALID_VALUE);
    CHECK(lastError().find("fill_u32") != std::string::npos);
    // vadd takes no __local parameter, so it cannot take dynamic shared memory either.
    const uint32_t n = 1;
    const halKernelArg vaddArgs[] = {arg(ptr), arg(ptr), arg(ptr), arg(n)};
    CHECK(plugin().launchKernel(stream.get(), ctsKernel("vadd"), {1, 1, 1}, {1, 1, 1}, 64, vaddArgs,
                                4) == HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("threads launching one function at once each get their own arguments") {
    const int threads = 4, launches = 50;
    const uint32_t n = 256;
    halPluginFunction fill = ctsKernel("fill_u32");
    std::vector<std::unique_ptr<Stream>> streams;
    std::vector<std::unique_ptr<DeviceMemory>> memories;
    for (int t = 0; t < threads; ++t) {
        streams.push_back(std::make_unique<Stream>());
        memories.push_back(std::make_unique<DeviceMemory>(n * sizeof(uint32_t)));
    }
    // Catch2 assertions are not thread-safe: the workers only count failed launches.
    std::vector<int> failures(threads, 0);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            void* ptr = memories[t]->get();
            for (int i = 0; i < launches; ++i) {
                const uint32_t value = static_cast<uint32_t>(t * 1000 + i);
                const halKernelArg args[] = {arg(ptr), arg(value), arg(n)};
                if (plugin().launchKernel(streams[t]->get(), fill, {n / 64, 1, 1}, {64, 1, 1}, 0,
                                          args, 3) != HAL_SUCCESS) {
                    ++failures[t];
                }
            }
        });
    }
    for (auto& worker : workers) worker.join();
    for (int t = 0; t < threads; ++t) {
        CHECK(failures[t] == 0);
        const auto expected = static_cast<uint32_t>(t * 1000 + launches - 1);
        CHECK(download<uint32_t>(*streams[t], memories[t]->get(), n) ==
              std::vector<uint32_t>(n, expected));
    }
}
