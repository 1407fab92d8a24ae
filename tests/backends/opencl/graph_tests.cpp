// Native graphs: a launch's operations enqueued by the stream's host-work thread on a queue of
// their own, in the stream's order, with the description's release after the last launch.
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "plugin_fixture.hpp"

using namespace opencl_test;

namespace {

void countRelease(void* releases) {
    ++*static_cast<std::atomic<int>*>(releases);
}

// A fill of device memory, a kernel writing `value` over its first kWords words, and a copy of
// the whole to host memory.
struct FillKernelCopy {
    static constexpr size_t kBytes = 1024;
    static constexpr uint32_t kWords = 64;
    static constexpr uint32_t kValue = 0xC0DE;

    FillKernelCopy() : memory(kBytes), copy(kBytes, 0) {
        device = memory.get();
        args[0] = {&device, sizeof device};
        args[1] = {&value, sizeof value};
        args[2] = {&words, sizeof words};
        ops[0].kind = HAL_PLUGIN_GRAPH_OP_MEMSET;
        ops[0].params.memset = {memory.get(), kBytes, 0x6B};
        ops[1].kind = HAL_PLUGIN_GRAPH_OP_KERNEL;
        ops[1].params.kernel = {ctsKernel("fill_u32"), {1, 1, 1}, {kWords, 1, 1}, 0, args, 3};
        ops[2].kind = HAL_PLUGIN_GRAPH_OP_COPY;
        ops[2].params.copy = {copy.data(), memory.get(), kBytes, HAL_MEMCPY_DEVICE_TO_HOST};
        desc.size = sizeof desc;
        desc.ops = ops;
        desc.numOps = 3;
        desc.opSize = sizeof(halPluginGraphOp);
        desc.release = countRelease;
        desc.releaseContext = &releases;
    }

    // What one run leaves in `copy`: the kernel's words, then the fill's bytes.
    bool ranOnce() const {
        std::vector<uint32_t> head(kWords);
        std::memcpy(head.data(), copy.data(), sizeof(uint32_t) * kWords);
        if (head != std::vector<uint32_t>(kWords, kValue)) return false;
        for (size_t i = sizeof(uint32_t) * kWords; i < kBytes; ++i) {
            if (copy[i] != 0x6B) return false;
        }
        return true;
    }

    DeviceMemory memory;
    std::vector<unsigned char> copy;
    void* device = nullptr;
    uint32_t value = kValue;
    uint32_t words = kWords;
    halKernelArg args[3] = {};
    halPluginGraphOp ops[3] = {};
    halPluginGraphDesc desc{};
    std::atomic<int> releases{0};
};

}  // namespace

TEST_CASE("a graph launch runs after the work before it and before the work after it") {
    Stream stream;
    FillKernelCopy graph;
    halPluginGraph handle = nullptr;
    REQUIRE_OK(plugin().graphCreate(device(), &graph.desc, &handle));
    graph.value = 0xBAD;  // the arguments were taken when the graph was made

    // Held on the device: the stream waits for an event of a stream held by a host function, so
    // the graph's commands are enqueued at once and must wait for the work before the launch.
    Stream holder;
    Gate gate;
    gate.block(holder);
    Event held;
    REQUIRE_OK(plugin().eventRecord(held.get(), holder.get()));
    REQUIRE_OK(plugin().streamWaitEvent(stream.get(), held.get()));
    REQUIRE_OK(plugin().graphLaunch(handle, stream.get()));
    // After the launch in the stream: the fill the graph's copy came before.
    REQUIRE_OK(
        plugin().memsetAsync(stream.get(), graph.memory.get(), 0x11, FillKernelCopy::kBytes));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(plugin().streamQuery(stream.get()) == HAL_ERROR_NOT_READY);
    CHECK(graph.copy == std::vector<unsigned char>(FillKernelCopy::kBytes, 0));
    gate.open();
    stream.synchronize();
    CHECK(graph.ranOnce());
    CHECK(download<unsigned char>(stream, graph.memory.get(), FillKernelCopy::kBytes) ==
          std::vector<unsigned char>(FillKernelCopy::kBytes, 0x11));

    // Again, on another stream.
    Stream other;
    std::fill(graph.copy.begin(), graph.copy.end(), 0);
    REQUIRE_OK(plugin().graphLaunch(handle, other.get()));
    other.synchronize();
    CHECK(graph.ranOnce());
    REQUIRE_OK(plugin().graphDestroy(handle));
    CHECK(graph.releases == 1);
}

TEST_CASE("host functions before and after a graph launch keep the stream's order") {
    Stream stream;
    FillKernelCopy graph;
    halPluginGraph handle = nullptr;
    REQUIRE_OK(plugin().graphCreate(device(), &graph.desc, &handle));
    struct Seen {
        FillKernelCopy* graph;
        bool ranBefore = true;  // whether the graph had run when the first function ran
        bool ranAfter = false;  // ... and when the second did
    } seen{&graph};
    REQUIRE_OK(plugin().launchHostFunc(
        stream.get(),
        [](void* data) {
            auto* seen = static_cast<Seen*>(data);
            seen->ranBefore = seen->graph->ranOnce();
        },
        &seen));
    REQUIRE_OK(plugin().graphLaunch(handle, stream.get()));
    REQUIRE_OK(plugin().launchHostFunc(
        stream.get(),
        [](void* data) {
            auto* seen = static_cast<Seen*>(data);
            seen->ranAfter = seen->graph->ranOnce();
        },
        &seen));
    REQUIRE_OK(plugin().deviceSynchronize(device()));
    CHECK_FALSE(seen.ranBefore);
    CHECK(seen.ranAfter);
    REQUIRE_OK(plugin().graphDestroy(handle));
    CHECK(graph.releases == 1);
}

TEST_CASE("graph launches and eager launches of one kernel from two threads keep their arguments") {
    constexpr uint32_t kCount = 256;
    constexpr int kLaunches = 50;
    DeviceMemory graphTarget(kCount * sizeof(uint32_t));
    DeviceMemory eagerTarget(kCount * sizeof(uint32_t));
    const halPluginFunction fill = ctsKernel("fill_u32");
    void* graphPointer = graphTarget.get();
    const uint32_t one = 1, count = kCount;
    const halKernelArg graphArgs[] = {
        {&graphPointer, sizeof graphPointer}, {&one, sizeof one}, {&count, sizeof count}};
    halPluginGraphOp op{};
    op.kind = HAL_PLUGIN_GRAPH_OP_KERNEL;
    op.params.kernel = {fill, {kCount / 64, 1, 1}, {64, 1, 1}, 0, graphArgs, 3};
    halPluginGraphDesc desc{};
    desc.size = sizeof desc;
    desc.ops = &op;
    desc.numOps = 1;
    desc.opSize = sizeof op;
    std::atomic<int> releases{0};
    desc.release = countRelease;
    desc.releaseContext = &releases;
    halPluginGraph handle = nullptr;
    REQUIRE_OK(plugin().graphCreate(device(), &desc, &handle));

    Stream graphStream, eagerStream;
    std::thread eager([&] {
        void* eagerPointer = eagerTarget.get();
        const uint32_t two = 2;
        const halKernelArg args[] = {
            {&eagerPointer, sizeof eagerPointer}, {&two, sizeof two}, {&count, sizeof count}};
        for (int i = 0; i < kLaunches; ++i) {
            plugin().launchKernel(eagerStream.get(), fill, {kCount / 64, 1, 1}, {64, 1, 1}, 0, args,
                                  3);
        }
    });
    for (int i = 0; i < kLaunches; ++i) REQUIRE_OK(plugin().graphLaunch(handle, graphStream.get()));
    eager.join();
    graphStream.synchronize();
    eagerStream.synchronize();
    CHECK(download<uint32_t>(graphStream, graphTarget.get(), kCount) ==
          std::vector<uint32_t>(kCount, 1));
    CHECK(download<uint32_t>(eagerStream, eagerTarget.get(), kCount) ==
          std::vector<uint32_t>(kCount, 2));
    REQUIRE_OK(plugin().graphDestroy(handle));
    CHECK(releases == 1);
}

TEST_CASE("a graph destroyed with launches pending is released once the last has run") {
    Stream stream;
    FillKernelCopy graph;
    halPluginGraph handle = nullptr;
    REQUIRE_OK(plugin().graphCreate(device(), &graph.desc, &handle));
    Gate gate;
    gate.block(stream);
    for (int launch = 0; launch < 3; ++launch) {
        REQUIRE_OK(plugin().graphLaunch(handle, stream.get()));
    }
    REQUIRE_OK(plugin().graphDestroy(handle));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(graph.releases == 0);
    gate.open();
    stream.synchronize();
    CHECK(graph.releases == 1);
    CHECK(graph.ranOnce());
}

TEST_CASE("a stream destroyed right after a graph launch still runs it") {
    FillKernelCopy graph;
    halPluginGraph handle = nullptr;
    REQUIRE_OK(plugin().graphCreate(device(), &graph.desc, &handle));
    {
        Stream stream;
        Gate gate;
        gate.block(stream);
        REQUIRE_OK(plugin().graphLaunch(handle, stream.get()));
        REQUIRE_OK(plugin().graphDestroy(handle));
        stream.destroy();
        gate.open();
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (graph.releases == 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(graph.releases == 1);
    CHECK(graph.ranOnce());
}

TEST_CASE("a graph launching a kernel with more work-items per group than it takes is declined") {
    FillKernelCopy graph;
    graph.ops[1].params.kernel.block = {4096, 4096, 1};
    halPluginGraph handle = nullptr;
    CHECK(plugin().graphCreate(device(), &graph.desc, &handle) == HAL_ERROR_NOT_SUPPORTED);
    CHECK(lastError().find("work-items per group") != std::string::npos);
    CHECK(handle == nullptr);
    CHECK(graph.releases == 0);
}

TEST_CASE("a graph with a host function is declined, to be replayed by the core") {
    std::atomic<int> releases{0};
    halPluginGraphOp op{};
    op.kind = HAL_PLUGIN_GRAPH_OP_HOST_FUNCTION;
    op.params.hostFunction = {[](void*) {}, nullptr};
    halPluginGraphDesc desc{};
    desc.size = sizeof desc;
    desc.ops = &op;
    desc.numOps = 1;
    desc.opSize = sizeof op;
    desc.release = countRelease;
    desc.releaseContext = &releases;
    halPluginGraph handle = nullptr;
    CHECK(plugin().graphCreate(device(), &desc, &handle) == HAL_ERROR_NOT_SUPPORTED);
    CHECK(lastError().find("host function") != std::string::npos);
    CHECK(handle == nullptr);
    CHECK(releases == 0);
}

namespace {

// A graph of one copy of 128 bytes from the start of a block to 64 bytes into it: the ranges
// overlap, which clEnqueueSVMMemcpy refuses (CL_MEM_COPY_OVERLAP) when the launch enqueues it.
// The core refuses such a copy at the call (planCopy), so it never reaches a graph there; here it
// stands for any operation whose enqueue fails on the host-work thread.
struct OverlappingCopy {
    OverlappingCopy() : memory(256) {
        op.kind = HAL_PLUGIN_GRAPH_OP_COPY;
        op.params.copy = {memory.as<unsigned char>() + 64, memory.get(), 128,
                          HAL_MEMCPY_DEVICE_TO_DEVICE};
        desc.size = sizeof desc;
        desc.ops = &op;
        desc.numOps = 1;
        desc.opSize = sizeof op;
        desc.release = countRelease;
        desc.releaseContext = &releases;
        REQUIRE_OK(plugin().graphCreate(device(), &desc, &graph));
    }
    ~OverlappingCopy() { plugin().graphDestroy(graph); }

    DeviceMemory memory;
    halPluginGraphOp op{};
    halPluginGraphDesc desc{};
    std::atomic<int> releases{0};
    halPluginGraph graph = nullptr;
};

bool contains(const std::string& text, const char* part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE(
    "a graph operation OpenCL refuses at the launch fails the stream once, named, and the "
    "work after the launch and the next launch run") {
    Stream stream;
    OverlappingCopy failing;
    REQUIRE_OK(plugin().graphLaunch(failing.graph, stream.get()));
    // Work after the launch runs, as after an eager call that was refused.
    REQUIRE_OK(plugin().memsetAsync(stream.get(), failing.memory.get(), 0x33, 256));
    CHECK(plugin().streamSynchronize(stream.get()) == HAL_ERROR_LAUNCH_FAILED);
    const std::string message = lastError();
    CHECK(contains(message, "graph operation 1 of 1"));
    CHECK(contains(message, "copy of 128 bytes"));
    CHECK(contains(message, "clEnqueueSVMMemcpy: CL_MEM_COPY_OVERLAP (-8)"));
    CHECK(plugin().streamSynchronize(stream.get()) == HAL_SUCCESS);  // reported once
    CHECK(download<unsigned char>(stream, failing.memory.get(), 256) ==
          std::vector<unsigned char>(256, 0x33));

    // The next launch, of a graph that works, is clean.
    FillKernelCopy working;
    halPluginGraph handle = nullptr;
    REQUIRE_OK(plugin().graphCreate(device(), &working.desc, &handle));
    REQUIRE_OK(plugin().graphLaunch(handle, stream.get()));
    CHECK(plugin().streamSynchronize(stream.get()) == HAL_SUCCESS);
    CHECK(working.ranOnce());
    REQUIRE_OK(plugin().graphDestroy(handle));
}

TEST_CASE(
    "failed graph launches are reported once by a query or the device's synchronisation, "
    "the first named and the others counted") {
    Stream stream;
    OverlappingCopy failing;
    REQUIRE_OK(plugin().graphLaunch(failing.graph, stream.get()));
    halError polled = HAL_ERROR_NOT_READY;
    while (polled == HAL_ERROR_NOT_READY) polled = plugin().streamQuery(stream.get());
    CHECK(polled == HAL_ERROR_LAUNCH_FAILED);
    CHECK(contains(lastError(), "CL_MEM_COPY_OVERLAP"));
    CHECK(plugin().streamQuery(stream.get()) == HAL_SUCCESS);

    for (int launch = 0; launch < 3; ++launch) {
        REQUIRE_OK(plugin().graphLaunch(failing.graph, stream.get()));
    }
    CHECK(plugin().deviceSynchronize(device()) == HAL_ERROR_LAUNCH_FAILED);
    CHECK(contains(lastError(), "CL_MEM_COPY_OVERLAP"));
    CHECK(contains(lastError(), "2 more"));
    CHECK(plugin().deviceSynchronize(device()) == HAL_SUCCESS);
    CHECK(plugin().streamSynchronize(stream.get()) == HAL_SUCCESS);
}

TEST_CASE("a graph launching a kernel with an argument the kernel refuses is refused when made") {
    FillKernelCopy graph;
    const uint16_t narrow = 7;
    graph.args[1] = {&narrow, sizeof narrow};  // `value` is a uint: four bytes
    // The eager launch refuses it before it enqueues anything.
    Stream stream;
    CHECK(plugin().launchKernel(stream.get(), ctsKernel("fill_u32"), {1, 1, 1},
                                {FillKernelCopy::kWords, 1, 1}, 0, graph.args,
                                3) == HAL_ERROR_INVALID_VALUE);
    halPluginGraph handle = nullptr;
    CHECK(plugin().graphCreate(device(), &graph.desc, &handle) == HAL_ERROR_INVALID_VALUE);
    CHECK(contains(lastError(), "argument 1 (2 bytes) of kernel 'fill_u32'"));
    CHECK(handle == nullptr);
    CHECK(graph.releases == 0);
}
