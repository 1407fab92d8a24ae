// Native graphs: a description becomes one batch that runs in stream order, as often as it is
// launched, and releases the core's context once destroyed and no launch is pending.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

#include "backend_fixture.hpp"
#include "kernel_fixture.hpp"

using namespace cpu_tests;

namespace {

void increment(void* counter) {
    static_cast<std::atomic<int>*>(counter)->fetch_add(1);
}

// Counts the release calls of one graph.
void countRelease(void* releases) {
    static_cast<std::atomic<int>*>(releases)->fetch_add(1);
}

halPluginGraphOp memsetOp(void* dst, unsigned char value, size_t count) {
    halPluginGraphOp op{};
    op.kind = HAL_PLUGIN_GRAPH_OP_MEMSET;
    op.params.memset.dst = dst;
    op.params.memset.value = value;
    op.params.memset.count = count;
    return op;
}

halPluginGraphOp copyOp(void* dst, const void* src, size_t count) {
    halPluginGraphOp op{};
    op.kind = HAL_PLUGIN_GRAPH_OP_COPY;
    op.params.copy.dst = dst;
    op.params.copy.src = src;
    op.params.copy.count = count;
    op.params.copy.kind = HAL_MEMCPY_DEVICE_TO_DEVICE;
    return op;
}

halPluginGraphOp hostOp(halHostFn fn, void* userData) {
    halPluginGraphOp op{};
    op.kind = HAL_PLUGIN_GRAPH_OP_HOST_FUNCTION;
    op.params.hostFunction.fn = fn;
    op.params.hostFunction.userData = userData;
    return op;
}

halPluginGraphOp kernelOp(halPluginFunction function, halDim3 grid, halDim3 block,
                          const halKernelArg* args, uint32_t numArgs) {
    halPluginGraphOp op{};
    op.kind = HAL_PLUGIN_GRAPH_OP_KERNEL;
    op.params.kernel.function = function;
    op.params.kernel.grid = grid;
    op.params.kernel.block = block;
    op.params.kernel.args = args;
    op.params.kernel.numArgs = numArgs;
    return op;
}

halPluginGraph create(const std::vector<halPluginGraphOp>& ops, std::atomic<int>* releases) {
    halPluginGraphDesc desc{};
    desc.size = sizeof desc;
    desc.ops = ops.data();
    desc.numOps = static_cast<uint32_t>(ops.size());
    desc.opSize = sizeof(halPluginGraphOp);
    desc.release = countRelease;
    desc.releaseContext = releases;
    halPluginGraph graph = nullptr;
    REQUIRE(backend().graphCreate(device0(), &desc, &graph) == HAL_SUCCESS);
    return graph;
}

}  // namespace

TEST_CASE("a native graph runs its operations in order on each launch", "[graph]") {
    std::vector<unsigned char> a(64, 0), b(64, 0);
    std::atomic<int> calls{0};
    std::atomic<int> releases{0};
    // Set a, copy it to b, then overwrite a: b keeps the first value only if the copy ran
    // between the two memsets.
    const std::vector<halPluginGraphOp> ops = {
        memsetOp(a.data(), 0x11, a.size()), copyOp(b.data(), a.data(), a.size()),
        memsetOp(a.data(), 0x22, 32), hostOp(increment, &calls)};
    halPluginGraph graph = create(ops, &releases);
    Stream stream;
    constexpr int kLaunches = 50;
    for (int i = 0; i < kLaunches; ++i) {
        REQUIRE(backend().graphLaunch(graph, stream.get()) == HAL_SUCCESS);
    }
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    CHECK(calls.load() == kLaunches);
    CHECK(std::vector<unsigned char>(b.begin(), b.end()) == std::vector<unsigned char>(64, 0x11));
    CHECK(a[0] == 0x22);
    CHECK(a[40] == 0x11);
    CHECK(releases.load() == 0);
    REQUIRE(backend().graphDestroy(graph) == HAL_SUCCESS);
    CHECK(releases.load() == 1);
}

TEST_CASE("a native graph's kernel arguments are copied when it is created", "[graph]") {
    KernelModule module;
    std::vector<uint32_t> out(8, 0);
    uint32_t* data = out.data();
    uint32_t scale = 5;
    const halKernelArg args[] = {{&data, sizeof data}, {&scale, sizeof scale}};
    std::atomic<int> releases{0};
    halPluginGraph graph =
        create({kernelOp(module.function("write_ids"), {2, 1, 1}, {4, 1, 1}, args, 2)}, &releases);
    scale = 0;  // the graph holds its own copy
    Stream stream;
    REQUIRE(backend().graphLaunch(graph, stream.get()) == HAL_SUCCESS);
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    for (uint32_t i = 0; i < out.size(); ++i) {
        INFO("element " << i);
        CHECK(out[i] == i * 5);
    }
    REQUIRE(backend().graphDestroy(graph) == HAL_SUCCESS);
}

TEST_CASE("a native graph destroyed with launches queued runs them, then releases", "[graph]") {
    Gate gate;
    std::atomic<int> calls{0};
    std::atomic<int> releases{0};
    halPluginGraph graph = create({hostOp(increment, &calls)}, &releases);
    Stream stream;
    REQUIRE(backend().launchHostFunc(stream.get(), Gate::wait, &gate) == HAL_SUCCESS);
    REQUIRE(backend().graphLaunch(graph, stream.get()) == HAL_SUCCESS);
    REQUIRE(backend().graphLaunch(graph, stream.get()) == HAL_SUCCESS);
    REQUIRE(backend().graphDestroy(graph) == HAL_SUCCESS);
    CHECK(releases.load() == 0);  // the queued launches still use it
    gate.open();
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    CHECK(!gate.timedOut());
    CHECK(calls.load() == 2);
    CHECK(releases.load() == 1);
}

TEST_CASE("a failing kernel in a native graph is the stream's failure, and the graph goes on",
          "[graph]") {
    KernelModule module;
    uint32_t failingBlock = 1;
    int32_t value = 9;
    const halKernelArg args[] = {{&failingBlock, sizeof failingBlock}, {&value, sizeof value}};
    const halPluginGraphOp kernel =
        kernelOp(module.function("fail_in_block"), {2, 1, 1}, {1, 1, 1}, args, 2);
    std::atomic<int> calls{0};
    std::atomic<int> releases{0};
    halPluginGraph graph = create({kernel, hostOp(increment, &calls)}, &releases);
    Stream stream;
    REQUIRE(backend().graphLaunch(graph, stream.get()) == HAL_SUCCESS);
    CHECK(backend().streamSynchronize(stream.get()) == HAL_ERROR_LAUNCH_FAILED);
    CHECK_THAT(lastError(), Catch::Contains("'fail_in_block'") && Catch::Contains("returned 9"));
    CHECK(calls.load() == 1);
    REQUIRE(backend().graphDestroy(graph) == HAL_SUCCESS);
}

TEST_CASE("a description the backend cannot run is refused without a release", "[graph]") {
    KernelModule module;
    halPluginGraphOp unknown{};
    unknown.kind = static_cast<halPluginGraphOpKind>(99);
    const halPluginGraphOp kernel =
        kernelOp(module.function("write_ids"), {0xffffffffu, 0xffffffffu, 0xffffffffu}, {1, 1, 1},
                 nullptr, 0);
    const auto [op, error, message] =
        GENERATE_COPY(std::make_tuple(unknown, HAL_ERROR_NOT_SUPPORTED, "kind 99"),
                      std::make_tuple(kernel, HAL_ERROR_INVALID_VALUE, "exceeds 2^64 blocks"));
    std::atomic<int> releases{0};
    halPluginGraphDesc desc{};
    desc.size = sizeof desc;
    desc.ops = &op;
    desc.numOps = 1;
    desc.opSize = sizeof(halPluginGraphOp);
    desc.release = countRelease;
    desc.releaseContext = &releases;
    halPluginGraph graph = nullptr;
    CHECK(backend().graphCreate(device0(), &desc, &graph) == error);
    CHECK_THAT(lastError(), Catch::Contains(message));
    CHECK(releases.load() == 0);
}

TEST_CASE("a native graph description older than the backend's is declined", "[graph]") {
    const halPluginGraphOp op = memsetOp(nullptr, 0, 0);
    std::atomic<int> releases{0};
    halPluginGraphDesc desc{};
    desc.size = offsetof(halPluginGraphDesc, opSize);  // a core without opSize
    desc.ops = &op;
    desc.numOps = 1;
    desc.release = countRelease;
    desc.releaseContext = &releases;
    halPluginGraph graph = nullptr;
    CHECK(backend().graphCreate(device0(), &desc, &graph) == HAL_ERROR_NOT_SUPPORTED);
    desc.size = sizeof desc;
    desc.opSize = sizeof(halPluginGraphOp) - 8;  // operations smaller than the backend's
    CHECK(backend().graphCreate(device0(), &desc, &graph) == HAL_ERROR_NOT_SUPPORTED);
    CHECK(releases.load() == 0);
}
