// Stream capture and graphs: replay equals eager execution, repeated launches on several
// streams, fork and join, the calls a capture refuses, graph-owned memory and destruction while
// a launch is pending.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels.hpp"

namespace {

// Owns a graph; destruction ignores errors (a test may have destroyed it already).
class Graph {
  public:
    Graph() = default;
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    ~Graph() {
        if (graph_ != nullptr) halGraphDestroy(graph_);
    }
    halGraph* out() { return &graph_; }
    halGraph get() const { return graph_; }
    operator halGraph() const { return graph_; }

  private:
    halGraph graph_ = nullptr;
};

halCaptureStatus statusOf(halStream stream) {
    halCaptureStatus status = HAL_CAPTURE_STATUS_FORCE_UINT32;
    HAL_REQUIRE_OK(halStreamGetCaptureInfo(stream, &status));
    return status;
}

void countCall(void* counter) {
    static_cast<std::atomic<int>*>(counter)->fetch_add(1);
}

// Enqueues on `stream`: fill `device` with `value` by kernel (or memset where there are no
// kernels), add `bias` bytes with a memset of the first 4 bytes, and copy it to `host`.
struct Chain {
    halFunction fill = nullptr;
    void* device = nullptr;
    uint32_t count = 0;

    void enqueue(halStream stream, uint32_t value, void* host) const {
        if (fill != nullptr) {
            const uint32_t n = count;
            HAL_REQUIRE_OK(cts::launch1d(fill, n, 64,
                                         {cts::arg(device), cts::arg(value), cts::arg(n)}, stream));
        } else {
            HAL_REQUIRE_OK(halMemsetAsync(device, count * 4, static_cast<int>(value & 0xFF),
                                          count * 4, stream));
        }
        HAL_REQUIRE_OK(halMemsetAsync(device, count * 4, 0x5A, 4, stream));
        HAL_REQUIRE_OK(
            halMemcpyAsync(host, count * 4, device, count * 4, HAL_MEMCPY_DEVICE_TO_HOST, stream));
    }
};

}  // namespace

TEST_CASE("a graph's launch does what the captured calls did eagerly", "[graph]") {
    constexpr uint32_t kCount = 1024;
    cts::Module module;
    Chain chain;
    if (!cts::loadKernel("fill_u32", module, &chain.fill)) chain.fill = nullptr;
    cts::DeviceMemory device(kCount * 4);
    chain.device = device.get();
    chain.count = kCount;
    std::vector<uint32_t> eager(kCount, 0), replayed(kCount, 0);
    cts::Stream stream;

    chain.enqueue(stream, 0x01020304u, eager.data());
    HAL_REQUIRE_OK(halSynchronizeStream(stream));

    HAL_REQUIRE_OK(halMemset(device.get(), device.size(), 0, device.size()));
    Graph graph;
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    CHECK(statusOf(stream) == HAL_CAPTURE_STATUS_ACTIVE);
    chain.enqueue(stream, 0x01020304u, replayed.data());
    HAL_REQUIRE_OK(halStreamEndCapture(stream, graph.out()));
    CHECK(statusOf(stream) == HAL_CAPTURE_STATUS_NONE);
    // Captured, not run.
    CHECK(replayed == std::vector<uint32_t>(kCount, 0));

    HAL_REQUIRE_OK(halGraphLaunch(graph, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(replayed == eager);
    uint32_t first = 0;
    std::memset(&first, 0x5A, 4);
    CHECK(replayed[0] == first);
}

TEST_CASE("kernel arguments are captured by value", "[graph]") {
    cts::Module module;
    halFunction fill = nullptr;
    if (!cts::loadKernel("fill_u32", module, &fill)) return;
    constexpr uint32_t kCount = 256;
    cts::DeviceMemory device(kCount * 4);
    std::vector<uint32_t> host(kCount, 0);
    cts::Stream stream;
    Graph graph;
    {
        void* out = device.get();
        uint32_t value = 7, n = kCount;
        HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
        HAL_REQUIRE_OK(
            cts::launch1d(fill, n, 64, {cts::arg(out), cts::arg(value), cts::arg(n)}, stream));
        value = 9;  // after the capture: the graph keeps 7
        n = 0;
        HAL_REQUIRE_OK(halMemcpyAsync(host.data(), kCount * 4, device.get(), kCount * 4,
                                      HAL_MEMCPY_DEVICE_TO_HOST, stream));
        HAL_REQUIRE_OK(halStreamEndCapture(stream, graph.out()));
    }
    HAL_REQUIRE_OK(halGraphLaunch(graph, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(host == std::vector<uint32_t>(kCount, 7));
}

TEST_CASE("a graph's launches keep the eager results, and an event after a launch follows it",
          "[graph]") {
    constexpr uint32_t kCount = 256;
    constexpr size_t kBytes = kCount * 4;
    constexpr int kLaunches = 100;
    cts::Module module;
    cts::DeviceMemory a(kBytes), b(kBytes);
    Chain chain;
    if (!cts::loadKernel("fill_u32", module, &chain.fill)) chain.fill = nullptr;
    chain.device = a.get();
    chain.count = kCount;
    // Three results: `a` filled, half of it copied to `b` before `a` is filled again, the other
    // half of `b` set: each operation must run after the one before it, on every launch.
    const auto enqueue = [&](halStream stream, unsigned char* out) {
        chain.enqueue(stream, 0x01020304u, out);
        HAL_REQUIRE_OK(halMemcpyAsync(b.get(), kBytes, a.get(), kBytes / 2,
                                      HAL_MEMCPY_DEVICE_TO_DEVICE, stream));
        auto* upper = static_cast<unsigned char*>(b.get()) + kBytes / 2;
        HAL_REQUIRE_OK(halMemsetAsync(upper, kBytes / 2, 0x77, kBytes / 2, stream));
        HAL_REQUIRE_OK(halMemcpyAsync(out + kBytes, kBytes, b.get(), kBytes,
                                      HAL_MEMCPY_DEVICE_TO_HOST, stream));
        chain.enqueue(stream, 0x0A0B0C0Du, out + 2 * kBytes);
    };
    cts::HostMemory eager(3 * kBytes), replayed(3 * kBytes);
    cts::Stream capture, first, second;
    enqueue(capture, eager.get<unsigned char>());
    HAL_REQUIRE_OK(halSynchronizeStream(capture));
    Graph graph;
    HAL_REQUIRE_OK(halStreamBeginCapture(capture, HAL_CAPTURE_MODE_GLOBAL));
    enqueue(capture, replayed.get<unsigned char>());
    HAL_REQUIRE_OK(halStreamEndCapture(capture, graph.out()));

    // Each launch finds the results cleared and must write them all again; launches alternate
    // between two streams, joined by an event so that each clearing follows the last launch.
    cts::Event done;
    for (int i = 0; i < kLaunches; ++i) {
        halStream stream = i % 2 == 0 ? first.get() : second.get();
        if (i > 0) HAL_REQUIRE_OK(halStreamWaitEvent(stream, done));
        HAL_REQUIRE_OK(halMemsetAsync(replayed.get(), 3 * kBytes, 0, 3 * kBytes, stream));
        HAL_REQUIRE_OK(halGraphLaunch(graph, stream));
        HAL_REQUIRE_OK(halRecordEvent(done, stream));
    }
    // The event alone says the last launch is over.
    HAL_REQUIRE_OK(halSynchronizeEvent(done));
    const auto* expected = eager.get<unsigned char>();
    const auto* got = replayed.get<unsigned char>();
    CHECK(std::vector<unsigned char>(got, got + 3 * kBytes) ==
          std::vector<unsigned char>(expected, expected + 3 * kBytes));
    HAL_REQUIRE_OK(halSynchronizeStream(first));
    HAL_REQUIRE_OK(halSynchronizeStream(second));
}

TEST_CASE("a host function in a graph runs between the operations around it on every launch",
          "[graph]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    constexpr int kLaunches = 60;
    struct Observed {
        unsigned char* before = nullptr;  // written by the copy before the host function
        unsigned char* after = nullptr;   // written by the copy after it
        std::vector<std::pair<unsigned char, unsigned char>> seen;
    } observed;
    const halHostFn look = [](void* p) {
        auto* o = static_cast<Observed*>(p);
        o->seen.emplace_back(o->before[0], o->after[0]);
        o->before[0] = 0;  // the next launch's copy must write it again
    };
    cts::DeviceMemory device(64);
    cts::HostMemory before(64), after(64);
    observed.before = before.get<unsigned char>();
    observed.after = after.get<unsigned char>();
    observed.before[0] = 0;
    observed.after[0] = 0;
    cts::Stream capture, first, second;
    Graph graph;
    HAL_REQUIRE_OK(halStreamBeginCapture(capture, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halMemsetAsync(device.get(), 64, 0x33, 64, capture));
    HAL_REQUIRE_OK(
        halMemcpyAsync(before.get(), 64, device.get(), 64, HAL_MEMCPY_DEVICE_TO_HOST, capture));
    HAL_REQUIRE_OK(halLaunchHostFunc(capture, look, &observed));
    HAL_REQUIRE_OK(halMemsetAsync(device.get(), 64, 0x44, 64, capture));
    HAL_REQUIRE_OK(
        halMemcpyAsync(after.get(), 64, device.get(), 64, HAL_MEMCPY_DEVICE_TO_HOST, capture));
    HAL_REQUIRE_OK(halStreamEndCapture(capture, graph.out()));
    for (int i = 0; i < kLaunches; ++i) {
        HAL_REQUIRE_OK(halGraphLaunch(graph, i % 2 == 0 ? first.get() : second.get()));
    }
    HAL_REQUIRE_OK(halSynchronizeStream(first));
    HAL_REQUIRE_OK(halSynchronizeStream(second));
    // The first launch's host function ran before any copy to `after`; every later one after
    // the previous launch's.
    std::vector<std::pair<unsigned char, unsigned char>> expected(kLaunches, {0x33, 0x44});
    expected[0] = {0x33, 0x00};
    CHECK(observed.seen == expected);
    CHECK(observed.after[0] == 0x44);
}

TEST_CASE("a graph launches many times, on two streams, one launch after another", "[graph]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    constexpr int kLaunches = 200;
    struct Order {
        std::atomic<int> running{0};
        std::atomic<int> overlaps{0};
        std::atomic<int> launches{0};
    } order;
    const halHostFn enter = [](void* p) {
        auto* o = static_cast<Order*>(p);
        if (o->running.fetch_add(1) != 0) o->overlaps.fetch_add(1);
    };
    const halHostFn leave = [](void* p) {
        auto* o = static_cast<Order*>(p);
        o->running.fetch_sub(1);
        o->launches.fetch_add(1);
    };
    cts::DeviceMemory device(64);
    uint32_t host = 0;
    cts::Stream capture, first, second;
    Graph graph;
    HAL_REQUIRE_OK(halStreamBeginCapture(capture, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halLaunchHostFunc(capture, enter, &order));
    HAL_REQUIRE_OK(halMemsetAsync(device.get(), 64, 0x11, 64, capture));
    HAL_REQUIRE_OK(halMemcpyAsync(&host, 4, device.get(), 4, HAL_MEMCPY_DEVICE_TO_HOST, capture));
    HAL_REQUIRE_OK(halLaunchHostFunc(capture, leave, &order));
    HAL_REQUIRE_OK(halStreamEndCapture(capture, graph.out()));
    for (int i = 0; i < kLaunches; ++i) {
        HAL_REQUIRE_OK(halGraphLaunch(graph, i % 2 == 0 ? first.get() : second.get()));
    }
    HAL_REQUIRE_OK(halSynchronizeStream(first));
    HAL_REQUIRE_OK(halSynchronizeStream(second));
    CHECK(order.launches.load() == kLaunches);
    CHECK(order.overlaps.load() == 0);
    CHECK(host == 0x11111111u);
}

TEST_CASE("work forked to two streams and joined back is captured and replayed", "[graph]") {
    constexpr size_t kBytes = 4096;
    cts::DeviceMemory a(kBytes), b(kBytes);
    std::vector<unsigned char> hostA(kBytes, 0), hostB(kBytes, 0);
    cts::Stream origin, left, right;
    cts::Event fork, leftDone, rightDone;
    Graph graph;
    HAL_REQUIRE_OK(halStreamBeginCapture(origin, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halRecordEvent(fork, origin));
    HAL_REQUIRE_OK(halStreamWaitEvent(left, fork));
    HAL_REQUIRE_OK(halStreamWaitEvent(right, fork));
    CHECK(statusOf(left) == HAL_CAPTURE_STATUS_ACTIVE);
    CHECK(statusOf(right) == HAL_CAPTURE_STATUS_ACTIVE);
    HAL_REQUIRE_OK(halMemsetAsync(a.get(), kBytes, 0xA1, kBytes, left));
    HAL_REQUIRE_OK(halMemsetAsync(b.get(), kBytes, 0xB2, kBytes, right));
    HAL_REQUIRE_OK(halRecordEvent(leftDone, left));
    HAL_REQUIRE_OK(halRecordEvent(rightDone, right));
    HAL_REQUIRE_OK(halStreamWaitEvent(origin, leftDone));
    HAL_REQUIRE_OK(halStreamWaitEvent(origin, rightDone));
    HAL_REQUIRE_OK(
        halMemcpyAsync(hostA.data(), kBytes, a.get(), kBytes, HAL_MEMCPY_DEVICE_TO_HOST, origin));
    HAL_REQUIRE_OK(
        halMemcpyAsync(hostB.data(), kBytes, b.get(), kBytes, HAL_MEMCPY_DEVICE_TO_HOST, origin));
    HAL_REQUIRE_OK(halStreamEndCapture(origin, graph.out()));
    CHECK(statusOf(left) == HAL_CAPTURE_STATUS_NONE);
    CHECK(statusOf(right) == HAL_CAPTURE_STATUS_NONE);
    CHECK(hostA == std::vector<unsigned char>(kBytes, 0));

    cts::Stream launch;
    HAL_REQUIRE_OK(halGraphLaunch(graph, launch));
    HAL_REQUIRE_OK(halSynchronizeStream(launch));
    CHECK(hostA == std::vector<unsigned char>(kBytes, 0xA1));
    CHECK(hostB == std::vector<unsigned char>(kBytes, 0xB2));
    // The streams that joined the capture are ordinary streams again.
    HAL_CHECK_OK(halSynchronizeStream(left));
    HAL_CHECK_OK(halQueryEvent(leftDone));
}

TEST_CASE("a capture whose forked stream is not joined back is refused", "[graph][errors]") {
    cts::DeviceMemory memory(256);
    cts::Stream origin, forked;
    cts::Event fork, late;
    halGraph graph = nullptr;
    HAL_REQUIRE_OK(halStreamBeginCapture(origin, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halRecordEvent(fork, origin));
    HAL_REQUIRE_OK(halStreamWaitEvent(forked, fork));
    HAL_REQUIRE_OK(halRecordEvent(late, forked));
    HAL_REQUIRE_OK(halStreamWaitEvent(origin, late));
    // Work after the join point: the origin does not follow it.
    HAL_REQUIRE_OK(halMemsetAsync(memory.get(), 256, 1, 256, forked));
    CHECK(halStreamEndCapture(origin, &graph) == HAL_ERROR_STREAM_CAPTURE_UNJOINED);
    CHECK(graph == nullptr);
    CHECK(statusOf(origin) == HAL_CAPTURE_STATUS_NONE);
    CHECK(statusOf(forked) == HAL_CAPTURE_STATUS_NONE);
    HAL_CHECK_OK(halSynchronizeStream(forked));
}

TEST_CASE("calls that cannot be captured are refused and invalidate the capture",
          "[graph][errors]") {
    cts::DeviceMemory memory(256);
    std::vector<unsigned char> host(256);
    cts::Stream stream, other;
    cts::Event inside, outside;
    HAL_REQUIRE_OK(halRecordEvent(outside, other));
    HAL_REQUIRE_OK(halSynchronizeStream(other));
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halRecordEvent(inside, stream));
    halError expected = HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    halError refused = HAL_SUCCESS;
    SECTION("synchronising the capturing stream") {
        refused = halSynchronizeStream(stream);
    }
    SECTION("querying the capturing stream") {
        refused = halQueryStream(stream);
    }
    SECTION("querying an event recorded in the capture") {
        refused = halQueryEvent(inside);
    }
    SECTION("synchronising an event recorded in the capture") {
        refused = halSynchronizeEvent(inside);
    }
    SECTION("a synchronous copy in global mode") {
        refused = halMemcpy(host.data(), 256, memory.get(), 256, HAL_MEMCPY_DEVICE_TO_HOST);
    }
    SECTION("a synchronous copy on another thread in global mode") {
        std::thread([&] {
            refused = halMemcpy(host.data(), 256, memory.get(), 256, HAL_MEMCPY_DEVICE_TO_HOST);
        }).join();
    }
    SECTION("halMalloc in global mode") {
        void* p = nullptr;
        refused = halMalloc(&p, 64);
    }
    SECTION("synchronising the device") {
        refused = halSynchronizeDevice();
    }
    SECTION("waiting for an event recorded outside the capture") {
        expected = HAL_ERROR_STREAM_CAPTURE_ISOLATION;
        refused = halStreamWaitEvent(stream, outside);
    }
    SECTION("freeing memory allocated outside the capture") {
        refused = halFreeAsync(memory.get(), stream);
    }
    SECTION("timing an event recorded in the capture") {
        float ms = 0;
        refused = halEventElapsedTime(&ms, outside, inside);
    }
    // Global mode: calls that wait for the device, or ask whether its work is done, are refused
    // on objects outside the capture too.
    SECTION("synchronising another stream in global mode") {
        refused = halSynchronizeStream(other);
    }
    SECTION("querying another stream in global mode") {
        refused = halQueryStream(other);
    }
    SECTION("synchronising an event recorded outside the capture in global mode") {
        refused = halSynchronizeEvent(outside);
    }
    SECTION("querying an event recorded outside the capture in global mode") {
        refused = halQueryEvent(outside);
    }
    SECTION("querying another stream on another thread in global mode") {
        std::thread([&] { refused = halQueryStream(other); }).join();
    }
    SECTION("resetting the device in global mode") {
        int device = 0;
        HAL_REQUIRE_OK(halGetDevice(&device));
        refused = halResetDevice(device);
    }
    SECTION("closing an IPC memory mapping in global mode") {
        refused = halIpcCloseMemHandle(memory.get());
    }
    CHECK(refused == expected);
    CHECK(statusOf(stream) == HAL_CAPTURE_STATUS_INVALIDATED);
    CHECK(halMemsetAsync(memory.get(), 256, 0, 256, stream) ==
          HAL_ERROR_STREAM_CAPTURE_INVALIDATED);
    halGraph graph = nullptr;
    CHECK(halStreamEndCapture(stream, &graph) == HAL_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK(graph == nullptr);
    CHECK(statusOf(stream) == HAL_CAPTURE_STATUS_NONE);
    // Nothing captured ran, and the stream works again.
    HAL_CHECK_OK(halMemsetAsync(memory.get(), 256, 3, 256, stream));
    HAL_CHECK_OK(halSynchronizeStream(stream));
}

TEST_CASE("capture modes decide which threads may make unsafe calls", "[graph]") {
    cts::DeviceMemory memory(256);
    std::vector<unsigned char> host(256);
    cts::Stream stream;
    const auto copy = [&] {
        return halMemcpy(host.data(), 256, memory.get(), 256, HAL_MEMCPY_DEVICE_TO_HOST);
    };
    SECTION("relaxed: allowed on every thread") {
        HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_RELAXED));
        HAL_CHECK_OK(copy());
        halError other = HAL_ERROR_UNKNOWN;
        std::thread([&] { other = copy(); }).join();
        CHECK(other == HAL_SUCCESS);
        CHECK(statusOf(stream) == HAL_CAPTURE_STATUS_ACTIVE);
    }
    SECTION("thread-local: refused on the capturing thread only") {
        HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_THREAD_LOCAL));
        halError other = HAL_ERROR_UNKNOWN;
        std::thread([&] { other = copy(); }).join();
        CHECK(other == HAL_SUCCESS);
        CHECK(statusOf(stream) == HAL_CAPTURE_STATUS_ACTIVE);
        CHECK(copy() == HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        CHECK(statusOf(stream) == HAL_CAPTURE_STATUS_INVALIDATED);
    }
    halGraph graph = nullptr;
    halStreamEndCapture(stream, &graph);
    if (graph != nullptr) HAL_CHECK_OK(halGraphDestroy(graph));
}

TEST_CASE("capture calls check their arguments", "[graph][errors]") {
    cts::Stream stream, other;
    halGraph graph = nullptr;
    halCaptureStatus status;
    CHECK(halStreamBeginCapture(nullptr, HAL_CAPTURE_MODE_GLOBAL) ==
          HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK(halStreamBeginCapture(stream, static_cast<halCaptureMode>(7)) == HAL_ERROR_INVALID_VALUE);
    CHECK(halStreamEndCapture(stream, &graph) == HAL_ERROR_STREAM_CAPTURE_UNMATCHED);
    CHECK(halStreamGetCaptureInfo(stream, nullptr) == HAL_ERROR_INVALID_VALUE);
    CHECK(halGraphLaunch(nullptr, stream) == HAL_ERROR_INVALID_HANDLE);
    CHECK(halGraphDestroy(nullptr) == HAL_ERROR_INVALID_HANDLE);

    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    CHECK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL) == HAL_ERROR_INVALID_VALUE);
    CHECK(halStreamEndCapture(stream, nullptr) == HAL_ERROR_INVALID_VALUE);
    halError elsewhere = HAL_ERROR_UNKNOWN;
    std::thread([&] { elsewhere = halStreamEndCapture(stream, &graph); }).join();
    CHECK(elsewhere == HAL_ERROR_STREAM_CAPTURE_WRONG_THREAD);
    HAL_REQUIRE_OK(halStreamGetCaptureInfo(stream, &status));
    CHECK(status == HAL_CAPTURE_STATUS_ACTIVE);
    HAL_REQUIRE_OK(halStreamEndCapture(stream, &graph));
    HAL_REQUIRE_OK(halGraphLaunch(graph, other));  // an empty graph
    HAL_REQUIRE_OK(halGraphDestroy(graph));
    CHECK(halGraphLaunch(graph, other) == HAL_ERROR_INVALID_HANDLE);
    CHECK(halGraphDestroy(graph) == HAL_ERROR_INVALID_HANDLE);
    HAL_CHECK_OK(halSynchronizeStream(other));
}

TEST_CASE("graph-owned memory stays reserved and is reused safely", "[graph][pool]") {
    constexpr uint32_t kCount = 4096;
    constexpr int kLaunches = 40;
    cts::Stream capture, first, second;
    halMemPoolStats before{};
    before.size = sizeof before;
    HAL_REQUIRE_OK(halMemPoolGetStats(0, &before));

    // Two graphs, each writing its own value through its own graph-owned block.
    std::vector<uint32_t> outA(kCount, 0), outB(kCount, 0);
    Graph graphA, graphB;
    void* blockA = nullptr;
    void* blockB = nullptr;
    for (auto [graph, block, out, value] : {std::make_tuple(&graphA, &blockA, &outA, 0xAA),
                                            std::make_tuple(&graphB, &blockB, &outB, 0xBB)}) {
        HAL_REQUIRE_OK(halStreamBeginCapture(capture, HAL_CAPTURE_MODE_GLOBAL));
        HAL_REQUIRE_OK(halMallocAsync(block, kCount * 4, capture));
        HAL_REQUIRE_OK(halMemsetAsync(*block, kCount * 4, value, kCount * 4, capture));
        HAL_REQUIRE_OK(halMemcpyAsync(out->data(), kCount * 4, *block, kCount * 4,
                                      HAL_MEMCPY_DEVICE_TO_HOST, capture));
        HAL_REQUIRE_OK(halFreeAsync(*block, capture));
        HAL_REQUIRE_OK(halStreamEndCapture(capture, graph->out()));
    }
    CHECK(blockA != blockB);
    // The graph owns its blocks: they cannot be freed outside the capture.
    CHECK(halFree(blockA) == HAL_ERROR_INVALID_VALUE);
    CHECK(halFreeAsync(blockB, first) == HAL_ERROR_INVALID_VALUE);
    halMemPoolStats reserved{};
    reserved.size = sizeof reserved;
    HAL_REQUIRE_OK(halMemPoolGetStats(0, &reserved));
    CHECK(reserved.bytesInUse >= before.bytesInUse + 2 * kCount * 4);

    // Concurrent launches of both graphs, and ordinary allocations around them that may not
    // take the graphs' blocks.
    for (int i = 0; i < kLaunches; ++i) {
        halStream s = i % 2 == 0 ? first.get() : second.get();
        HAL_REQUIRE_OK(halGraphLaunch(graphA, s));
        HAL_REQUIRE_OK(halGraphLaunch(graphB, i % 2 == 0 ? second.get() : first.get()));
        void* scratch = nullptr;
        HAL_REQUIRE_OK(halMallocAsync(&scratch, kCount * 4, s));
        CHECK(scratch != blockA);
        CHECK(scratch != blockB);
        HAL_REQUIRE_OK(halMemsetAsync(scratch, kCount * 4, 0x00, kCount * 4, s));
        HAL_REQUIRE_OK(halFreeAsync(scratch, s));
    }
    HAL_REQUIRE_OK(halSynchronizeStream(first));
    HAL_REQUIRE_OK(halSynchronizeStream(second));
    CHECK(outA == std::vector<uint32_t>(kCount, 0xAAAAAAAAu));
    CHECK(outB == std::vector<uint32_t>(kCount, 0xBBBBBBBBu));

    // Destroyed, the graphs give their blocks back.
    HAL_REQUIRE_OK(halGraphDestroy(graphA.get()));
    HAL_REQUIRE_OK(halGraphDestroy(graphB.get()));
    *graphA.out() = nullptr;
    *graphB.out() = nullptr;
    halMemPoolStats after{};
    after.size = sizeof after;
    HAL_REQUIRE_OK(halMemPoolGetStats(0, &after));
    CHECK(after.bytesInUse <= before.bytesInUse);
}

TEST_CASE("a capture reuses graph memory freed before it allocates again", "[graph][pool]") {
    constexpr size_t kBytes = 1 << 16;
    constexpr int kRounds = 8;
    cts::Stream capture, other;
    cts::Event freed;
    std::vector<unsigned char> out(kBytes, 0);
    halMemPoolStats before{};
    before.size = sizeof before;
    HAL_REQUIRE_OK(halMemPoolGetStats(0, &before));
    // Allocate, fill and free in a loop, as a step's scratch buffer: on the capturing stream,
    // then once on a stream that waits for the last free.
    HAL_REQUIRE_OK(halStreamBeginCapture(capture, HAL_CAPTURE_MODE_GLOBAL));
    std::vector<void*> blocks;
    for (int round = 0; round < kRounds; ++round) {
        void* scratch = nullptr;
        HAL_REQUIRE_OK(halMallocAsync(&scratch, kBytes, capture));
        HAL_REQUIRE_OK(halMemsetAsync(scratch, kBytes, round, kBytes, capture));
        HAL_REQUIRE_OK(halMemcpyAsync(out.data(), kBytes, scratch, kBytes,
                                      HAL_MEMCPY_DEVICE_TO_HOST, capture));
        HAL_REQUIRE_OK(halFreeAsync(scratch, capture));
        blocks.push_back(scratch);
    }
    HAL_REQUIRE_OK(halRecordEvent(freed, capture));
    HAL_REQUIRE_OK(halStreamWaitEvent(other, freed));
    void* joined = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&joined, kBytes / 2, other));  // follows the frees: reused
    HAL_REQUIRE_OK(halMemsetAsync(joined, kBytes / 2, 0x5A, kBytes / 2, other));
    HAL_REQUIRE_OK(halFreeAsync(joined, other));
    HAL_REQUIRE_OK(halRecordEvent(freed, other));
    HAL_REQUIRE_OK(halStreamWaitEvent(capture, freed));
    Graph graph;
    HAL_REQUIRE_OK(halStreamEndCapture(capture, graph.out()));
    CHECK(std::all_of(blocks.begin(), blocks.end(), [&](void* b) { return b == blocks[0]; }));
    CHECK(joined == blocks[0]);
    // The graph holds one block, not one per allocation.
    halMemPoolStats reserved{};
    reserved.size = sizeof reserved;
    HAL_REQUIRE_OK(halMemPoolGetStats(0, &reserved));
    CHECK(reserved.bytesInUse - before.bytesInUse >= kBytes);
    CHECK(reserved.bytesInUse - before.bytesInUse < 2 * kBytes);
    HAL_REQUIRE_OK(halGraphLaunch(graph, capture));
    HAL_REQUIRE_OK(halSynchronizeStream(capture));
    CHECK(out == std::vector<unsigned char>(kBytes, kRounds - 1));
}

TEST_CASE("a capture does not reuse graph memory freed on a stream it does not follow",
          "[graph][pool]") {
    constexpr size_t kBytes = 1 << 12;
    cts::Stream capture, forked;
    cts::Event fork, join;
    HAL_REQUIRE_OK(halStreamBeginCapture(capture, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halRecordEvent(fork, capture));
    HAL_REQUIRE_OK(halStreamWaitEvent(forked, fork));
    void* first = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&first, kBytes, forked));
    HAL_REQUIRE_OK(halMemsetAsync(first, kBytes, 1, kBytes, forked));
    HAL_REQUIRE_OK(halFreeAsync(first, forked));
    // The origin stream has not waited for the fork's free: its uses may still run.
    void* second = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&second, kBytes, capture));
    CHECK(second != first);
    HAL_REQUIRE_OK(halFreeAsync(second, capture));
    HAL_REQUIRE_OK(halRecordEvent(join, forked));
    HAL_REQUIRE_OK(halStreamWaitEvent(capture, join));
    // A larger request does not take a smaller freed block either.
    void* larger = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&larger, 2 * kBytes, capture));
    CHECK(larger != first);
    CHECK(larger != second);
    HAL_REQUIRE_OK(halFreeAsync(larger, capture));
    Graph graph;
    HAL_REQUIRE_OK(halStreamEndCapture(capture, graph.out()));
}

TEST_CASE("a graph destroyed while its launch is pending still completes it", "[graph]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    constexpr size_t kBytes = 1 << 16;
    cts::DeviceMemory memory(kBytes);
    // Pinned: a copy to pageable memory may wait for the stream on the host (CUDA's rule), and
    // the stream is held.
    cts::HostMemory host(kBytes);
    std::memset(host.get(), 0, kBytes);
    std::atomic<int> calls{0};
    cts::Stream stream;
    halGraph graph = nullptr;
    void* owned = nullptr;
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halMallocAsync(&owned, kBytes, stream));
    HAL_REQUIRE_OK(halMemsetAsync(owned, kBytes, 0x3C, kBytes, stream));
    HAL_REQUIRE_OK(
        halMemcpyAsync(memory.get(), kBytes, owned, kBytes, HAL_MEMCPY_DEVICE_TO_DEVICE, stream));
    HAL_REQUIRE_OK(halMemcpyAsync(host.get(), kBytes, memory.get(), kBytes,
                                  HAL_MEMCPY_DEVICE_TO_HOST, stream));
    HAL_REQUIRE_OK(halLaunchHostFunc(stream, countCall, &calls));
    HAL_REQUIRE_OK(halStreamEndCapture(stream, &graph));

    cts::Gate gate;
    gate.enqueue(stream);
    HAL_REQUIRE_OK(halGraphLaunch(graph, stream));
    HAL_REQUIRE_OK(halGraphLaunch(graph, stream));
    HAL_REQUIRE_OK(halGraphDestroy(graph));
    // The pool may hand the graph's block to other work only after the launches: the zeros
    // written through `reuse` must not reach the launches' copy (checked below).
    void* reuse = nullptr;
    cts::Stream other;
    HAL_REQUIRE_OK(halMallocAsync(&reuse, kBytes, other));
    // Nor to the default stream's work, in whose order the graph returns it.
    void* onDefault = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&onDefault, kBytes, nullptr));
    CHECK(onDefault != owned);
    HAL_REQUIRE_OK(halFreeAsync(onDefault, nullptr));
    HAL_REQUIRE_OK(halMemsetAsync(reuse, kBytes, 0x00, kBytes, other));
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    HAL_REQUIRE_OK(halSynchronizeStream(other));
    HAL_REQUIRE_OK(halFreeAsync(reuse, other));
    CHECK_FALSE(gate.timedOut());
    CHECK(calls.load() == 2);
    const auto* bytes = host.get<unsigned char>();
    CHECK(std::vector<unsigned char>(bytes, bytes + kBytes) ==
          std::vector<unsigned char>(kBytes, 0x3C));
}

TEST_CASE("a graph launched inside a capture is part of the new graph", "[graph]") {
    constexpr size_t kBytes = 4096;
    cts::Stream stream;
    std::vector<unsigned char> inner(kBytes, 0), outer(kBytes, 0);
    cts::DeviceMemory memory(kBytes), childMemory(kBytes);
    halGraph child = nullptr;
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halMemsetAsync(childMemory.get(), kBytes, 0x42, kBytes, stream));
    HAL_REQUIRE_OK(halMemcpyAsync(inner.data(), kBytes, childMemory.get(), kBytes,
                                  HAL_MEMCPY_DEVICE_TO_HOST, stream));
    HAL_REQUIRE_OK(halStreamEndCapture(stream, &child));

    Graph parent;
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halGraphLaunch(child, stream));
    HAL_REQUIRE_OK(halMemsetAsync(memory.get(), kBytes, 0x24, kBytes, stream));
    HAL_REQUIRE_OK(halMemcpyAsync(outer.data(), kBytes, memory.get(), kBytes,
                                  HAL_MEMCPY_DEVICE_TO_HOST, stream));
    HAL_REQUIRE_OK(halStreamEndCapture(stream, parent.out()));
    // The parent keeps what it needs of the child.
    HAL_REQUIRE_OK(halGraphDestroy(child));
    HAL_REQUIRE_OK(halGraphLaunch(parent, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK(inner == std::vector<unsigned char>(kBytes, 0x42));
    CHECK(outer == std::vector<unsigned char>(kBytes, 0x24));

    // A capture that ends without a graph lets go of the graphs it launched.
    halGraph again = nullptr;
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halMemsetAsync(memory.get(), kBytes, 0x33, kBytes, stream));
    HAL_REQUIRE_OK(halStreamEndCapture(stream, &again));
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halGraphLaunch(again, stream));
    HAL_REQUIRE_OK(halGraphDestroy(again));
    CHECK(halSynchronizeStream(stream) == HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    halGraph none = nullptr;
    CHECK(halStreamEndCapture(stream, &none) == HAL_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK(none == nullptr);
}

TEST_CASE("a launch of a graph that owns memory cannot be captured", "[graph][errors]") {
    constexpr size_t kBytes = 4096;
    cts::Stream stream;
    Graph owning;
    void* owned = nullptr;
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halMallocAsync(&owned, kBytes, stream));
    HAL_REQUIRE_OK(halMemsetAsync(owned, kBytes, 0x42, kBytes, stream));
    HAL_REQUIRE_OK(halStreamEndCapture(stream, owning.out()));

    // Replayed inside another graph, its launches could overlap and write its block at once.
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    CHECK(halGraphLaunch(owning, stream) == HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK(std::strstr(halGetLastErrorMessage(), "owns memory") != nullptr);
    CHECK(statusOf(stream) == HAL_CAPTURE_STATUS_INVALIDATED);
    halGraph none = nullptr;
    CHECK(halStreamEndCapture(stream, &none) == HAL_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK(none == nullptr);
    // Launched directly, it still runs.
    HAL_REQUIRE_OK(halGraphLaunch(owning, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
}

TEST_CASE("a graph refuses to launch a child graph's kernel whose module was unloaded",
          "[graph][errors]") {
    cts::Module module;
    halFunction fill = nullptr;
    if (!cts::loadKernel("fill_u32", module, &fill)) return;
    constexpr uint32_t kCount = 256;
    cts::DeviceMemory device(kCount * 4);
    cts::Stream stream;
    halGraph child = nullptr;
    {
        void* out = device.get();
        uint32_t value = 7, n = kCount;
        HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
        HAL_REQUIRE_OK(
            cts::launch1d(fill, n, 64, {cts::arg(out), cts::arg(value), cts::arg(n)}, stream));
        HAL_REQUIRE_OK(halStreamEndCapture(stream, &child));
    }
    Graph parent;
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halGraphLaunch(child, stream));
    HAL_REQUIRE_OK(halStreamEndCapture(stream, parent.out()));
    HAL_REQUIRE_OK(halGraphDestroy(child));
    HAL_REQUIRE_OK(halModuleUnload(module.release()));
    CHECK(halGraphLaunch(parent, stream) == HAL_ERROR_INVALID_HANDLE);
    CHECK(std::strstr(halGetLastErrorMessage(), "module was unloaded") != nullptr);
    HAL_CHECK_OK(halSynchronizeStream(stream));
}

TEST_CASE("a graph refuses to launch a kernel whose handle now names another function",
          "[graph][errors]") {
    cts::Module module;
    halFunction fill = nullptr;
    if (!cts::loadKernel("fill_u32", module, &fill)) return;
    constexpr uint32_t kCount = 64;
    cts::DeviceMemory device(kCount * 4);
    cts::Stream stream;
    Graph graph;
    void* out = device.get();
    uint32_t value = 7, n = kCount;
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(
        cts::launch1d(fill, n, 64, {cts::arg(out), cts::arg(value), cts::arg(n)}, stream));
    HAL_REQUIRE_OK(halStreamEndCapture(stream, graph.out()));
    HAL_REQUIRE_OK(halModuleUnload(module.release()));
    // Freed handles are reused once a thousand more are free: load and unload until a new
    // function gets the old handle (where loading is quick enough to try).
    const auto started = std::chrono::steady_clock::now();
    halFunction again = nullptr;
    cts::Module kept;  // the module whose function took the old handle
    for (int i = 0; i < 1200 && again != fill; ++i) {
        cts::Module next;
        REQUIRE(cts::loadKernel("fill_u32", next, &again));
        if (again == fill) {
            *kept.out() = next.release();
        } else if (std::chrono::steady_clock::now() - started > std::chrono::seconds(5)) {
            WARN("loading modules is too slow on this backend to reuse a function handle");
            return;
        }
    }
    REQUIRE(again == fill);
    CHECK(halGraphLaunch(graph, stream) == HAL_ERROR_INVALID_HANDLE);
    CHECK(std::strstr(halGetLastErrorMessage(), "module was unloaded") != nullptr);
    HAL_CHECK_OK(halSynchronizeStream(stream));
}

TEST_CASE("destroying a stream or event that takes part in a capture ends it, or is refused",
          "[graph][errors]") {
    cts::DeviceMemory memory(256);
    halStream origin = nullptr;
    halStream forked = nullptr;
    halEvent fork = nullptr;
    HAL_REQUIRE_OK(halCreateStream(&origin));
    HAL_REQUIRE_OK(halCreateStream(&forked));
    HAL_REQUIRE_OK(halCreateEvent(&fork));
    HAL_REQUIRE_OK(halStreamBeginCapture(origin, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halRecordEvent(fork, origin));
    HAL_REQUIRE_OK(halStreamWaitEvent(forked, fork));
    HAL_REQUIRE_OK(halDestroyEvent(fork));  // the wait already joined `forked`
    HAL_REQUIRE_OK(halMemsetAsync(memory.get(), 256, 1, 256, forked));
    SECTION("a forked stream not joined back: refused, the stream and the capture unchanged") {
        CHECK(halDestroyStream(forked) == HAL_ERROR_STREAM_CAPTURE_UNJOINED);
        const std::string message = halGetLastErrorMessage();
        CHECK(message.find("not joined back") != std::string::npos);
        CHECK(statusOf(origin) == HAL_CAPTURE_STATUS_ACTIVE);
        CHECK(statusOf(forked) == HAL_CAPTURE_STATUS_ACTIVE);
        // Joined now, it may go, and the capture ends well.
        halEvent join = nullptr;
        HAL_REQUIRE_OK(halCreateEvent(&join));
        HAL_REQUIRE_OK(halRecordEvent(join, forked));
        HAL_REQUIRE_OK(halStreamWaitEvent(origin, join));
        HAL_CHECK_OK(halDestroyStream(forked));
        halGraph graph = nullptr;
        HAL_CHECK_OK(halStreamEndCapture(origin, &graph));
        HAL_CHECK_OK(halGraphDestroy(graph));
        HAL_CHECK_OK(halDestroyEvent(join));
        HAL_CHECK_OK(halDestroyStream(origin));
    }
    SECTION("the origin stream: the capture ends, and the forked stream leaves it") {
        HAL_REQUIRE_OK(halDestroyStream(origin));
        CHECK(statusOf(forked) == HAL_CAPTURE_STATUS_NONE);
        // Unsafe calls are allowed again: no capture is under way.
        HAL_CHECK_OK(halSynchronizeDevice());
        HAL_CHECK_OK(halDestroyStream(forked));
    }
}

// CUDA's graphMemoryNodes sample: work forked onto a second stream inside the capture, joined
// back with an event, and the second stream destroyed before the capture ends.
TEST_CASE("a forked stream destroyed once joined back leaves the capture intact", "[graph]") {
    constexpr size_t kBytes = 256;
    cts::DeviceMemory memory(kBytes);
    HAL_REQUIRE_OK(halMemset(memory.get(), kBytes, 0, kBytes));
    cts::Stream origin;
    halStream forked = nullptr;
    halEvent fork = nullptr, join = nullptr;
    HAL_REQUIRE_OK(halCreateStream(&forked));
    HAL_REQUIRE_OK(halCreateEvent(&fork));
    HAL_REQUIRE_OK(halCreateEvent(&join));
    HAL_REQUIRE_OK(halStreamBeginCapture(origin, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halRecordEvent(fork, origin));
    HAL_REQUIRE_OK(halStreamWaitEvent(forked, fork));
    HAL_REQUIRE_OK(halMemsetAsync(memory.get(), kBytes, 5, kBytes / 2, forked));
    HAL_REQUIRE_OK(halRecordEvent(join, forked));
    HAL_REQUIRE_OK(halStreamWaitEvent(origin, join));
    HAL_REQUIRE_OK(halDestroyStream(forked));
    CHECK(statusOf(origin) == HAL_CAPTURE_STATUS_ACTIVE);
    HAL_REQUIRE_OK(halMemsetAsync(static_cast<unsigned char*>(memory.get()) + kBytes / 2,
                                  kBytes / 2, 6, kBytes / 2, origin));
    halGraph graph = nullptr;
    HAL_REQUIRE_OK(halStreamEndCapture(origin, &graph));
    HAL_REQUIRE_OK(halGraphLaunch(graph, origin));
    HAL_REQUIRE_OK(halSynchronizeStream(origin));
    std::vector<unsigned char> host(kBytes);
    HAL_REQUIRE_OK(halMemcpy(host.data(), kBytes, memory.get(), kBytes, HAL_MEMCPY_DEVICE_TO_HOST));
    std::vector<unsigned char> expected(kBytes, 5);
    std::fill(expected.begin() + kBytes / 2, expected.end(), 6);
    CHECK(host == expected);
    HAL_CHECK_OK(halGraphDestroy(graph));
    HAL_CHECK_OK(halDestroyEvent(fork));
    HAL_CHECK_OK(halDestroyEvent(join));
}

TEST_CASE(
    "a global capture refuses unsafe calls on other threads, a thread-local one does not "
    "see other threads' captures",
    "[graph]") {
    cts::DeviceMemory memory(256);
    std::vector<unsigned char> host(256);
    cts::Stream global, local;
    HAL_REQUIRE_OK(halStreamBeginCapture(local, HAL_CAPTURE_MODE_THREAD_LOCAL));
    halError beganGlobal = HAL_ERROR_UNKNOWN;
    halGraph globalGraph = nullptr;
    halError endedGlobal = HAL_ERROR_UNKNOWN;
    halError refusedElsewhere = HAL_ERROR_UNKNOWN;
    std::thread([&] {
        beganGlobal = halStreamBeginCapture(global, HAL_CAPTURE_MODE_GLOBAL);
        // A thread with no capture of its own: the global capture forbids its unsafe call.
        std::thread([&] {
            refusedElsewhere =
                halMemcpy(host.data(), 256, memory.get(), 256, HAL_MEMCPY_DEVICE_TO_HOST);
        }).join();
        endedGlobal = halStreamEndCapture(global, &globalGraph);
    }).join();
    HAL_REQUIRE_OK(beganGlobal);
    CHECK(refusedElsewhere == HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK(endedGlobal == HAL_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK(globalGraph == nullptr);
    // The thread-local capture did not forbid that thread's call, and goes on.
    CHECK(statusOf(local) == HAL_CAPTURE_STATUS_ACTIVE);
    // Only the thread-local capture is left: other threads may make unsafe calls.
    halError other = HAL_ERROR_UNKNOWN;
    std::thread([&] {
        other = halMemcpy(host.data(), 256, memory.get(), 256, HAL_MEMCPY_DEVICE_TO_HOST);
    }).join();
    CHECK(other == HAL_SUCCESS);
    halGraph graph = nullptr;
    HAL_REQUIRE_OK(halStreamEndCapture(local, &graph));
    HAL_CHECK_OK(halGraphDestroy(graph));
}

TEST_CASE("a graph launched from several threads at once runs every launch", "[graph]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    constexpr int kThreads = 4, kLaunches = 50;
    std::atomic<int> calls{0};
    cts::Stream capture;
    Graph graph;
    HAL_REQUIRE_OK(halStreamBeginCapture(capture, HAL_CAPTURE_MODE_RELAXED));
    HAL_REQUIRE_OK(halLaunchHostFunc(capture, countCall, &calls));
    HAL_REQUIRE_OK(halStreamEndCapture(capture, graph.out()));
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            halStream stream = nullptr;
            if (halCreateStream(&stream) != HAL_SUCCESS) {
                failures.fetch_add(1);
                return;
            }
            for (int i = 0; i < kLaunches; ++i) {
                if (halGraphLaunch(graph, stream) != HAL_SUCCESS) failures.fetch_add(1);
            }
            if (halSynchronizeStream(stream) != HAL_SUCCESS) failures.fetch_add(1);
            halDestroyStream(stream);
        });
    }
    for (auto& thread : threads) thread.join();
    CHECK(failures.load() == 0);
    CHECK(calls.load() == kThreads * kLaunches);
}

TEST_CASE("halResetDevice refuses a capture under way and destroys the device's graphs",
          "[graph][reset]") {
    constexpr size_t kBytes = 4096;
    int device = 0;
    HAL_REQUIRE_OK(halGetDevice(&device));
    halStream stream = nullptr;
    HAL_REQUIRE_OK(halCreateStream(&stream));

    // A capture under way holds the device's streams: the reset is refused, and the capture
    // can still be ended.
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_RELAXED));
    CHECK(halResetDevice(device) == HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK(statusOf(stream) == HAL_CAPTURE_STATUS_INVALIDATED);
    halGraph none = nullptr;
    CHECK(halStreamEndCapture(stream, &none) == HAL_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK(statusOf(stream) == HAL_CAPTURE_STATUS_NONE);

    // A graph owning memory, launched once: the reset destroys it and returns its block.
    halGraph graph = nullptr;
    void* owned = nullptr;
    std::vector<unsigned char> out(kBytes, 0);
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halMallocAsync(&owned, kBytes, stream));
    HAL_REQUIRE_OK(halMemsetAsync(owned, kBytes, 0x11, kBytes, stream));
    HAL_REQUIRE_OK(
        halMemcpyAsync(out.data(), kBytes, owned, kBytes, HAL_MEMCPY_DEVICE_TO_HOST, stream));
    HAL_REQUIRE_OK(halStreamEndCapture(stream, &graph));
    HAL_REQUIRE_OK(halGraphLaunch(graph, stream));
    CHECK(halFree(owned) == HAL_ERROR_INVALID_VALUE);  // graph-owned

    HAL_REQUIRE_OK(halResetDevice(device));
    CHECK(out == std::vector<unsigned char>(kBytes, 0x11));
    halStream fresh = nullptr;
    HAL_REQUIRE_OK(halCreateStream(&fresh));
    CHECK(halGraphLaunch(graph, fresh) == HAL_ERROR_INVALID_HANDLE);
    CHECK(halGraphDestroy(graph) == HAL_ERROR_INVALID_HANDLE);
    // The block is no longer graph-owned: once handed out again, it is freed as any other.
    std::vector<void*> blocks;
    bool reused = false;
    for (int i = 0; i < 8 && !reused; ++i) {
        void* block = nullptr;
        HAL_REQUIRE_OK(halMalloc(&block, kBytes));
        blocks.push_back(block);
        reused = block == owned;
    }
    for (void* block : blocks) CHECK(halFree(block) == HAL_SUCCESS);
    // Other calls are not refused by a capture left behind.
    void* plain = nullptr;
    HAL_REQUIRE_OK(halMalloc(&plain, kBytes));
    HAL_CHECK_OK(halMemset(plain, kBytes, 0, kBytes));
    HAL_CHECK_OK(halFree(plain));
    HAL_CHECK_OK(halDestroyStream(fresh));
}

TEST_CASE("an event recorded in a capture does not follow the graph's launches", "[graph]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::DeviceMemory memory(256);
    cts::Stream stream, other;
    cts::Event event;
    Graph graph;
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halMemsetAsync(memory.get(), 256, 1, 256, stream));
    HAL_REQUIRE_OK(halRecordEvent(event, stream));
    HAL_REQUIRE_OK(halStreamEndCapture(stream, graph.out()));

    // As hal.h says: the event keeps the state its last record outside a capture left (never
    // recorded here), so it is complete while a launch is held behind a gate.
    cts::Gate gate;
    gate.enqueue(stream);
    HAL_REQUIRE_OK(halGraphLaunch(graph, stream));
    CHECK(halQueryEvent(event) == HAL_SUCCESS);
    HAL_CHECK_OK(halStreamWaitEvent(other, event));
    HAL_CHECK_OK(halSynchronizeStream(other));
    CHECK(statusOf(other) == HAL_CAPTURE_STATUS_NONE);
    CHECK(halQueryStream(stream) == HAL_ERROR_NOT_READY);
    gate.open();
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    CHECK_FALSE(gate.timedOut());
}

TEST_CASE("a graph cannot be launched on a stream of another device", "[graph][errors]") {
    int count = 0;
    HAL_REQUIRE_OK(halGetDeviceCount(&count));
    if (count < 2) {
        cts::skip("needs two devices, found " + std::to_string(count) +
                  " (the CPU backend has two with POLYHAL_CPU_DEVICES=2)");
        return;
    }
    cts::DeviceMemory memory(256);
    cts::Stream stream;
    Graph graph;
    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halMemsetAsync(memory.get(), 256, 1, 256, stream));
    HAL_REQUIRE_OK(halStreamEndCapture(stream, graph.out()));
    int device = 0;
    HAL_REQUIRE_OK(halGetDevice(&device));
    HAL_REQUIRE_OK(halSetDevice(device == 0 ? 1 : 0));
    halStream elsewhere = nullptr;
    const halError created = halCreateStream(&elsewhere);
    const halError launched = created == HAL_SUCCESS ? halGraphLaunch(graph, elsewhere) : created;
    const std::string message = halGetLastErrorMessage();
    if (elsewhere != nullptr) HAL_CHECK_OK(halDestroyStream(elsewhere));
    HAL_REQUIRE_OK(halSetDevice(device));
    HAL_REQUIRE_OK(created);
    CHECK(launched == HAL_ERROR_INVALID_VALUE);
    CHECK(message.find("device") != std::string::npos);
}

namespace {

// Host functions of a graph that give each launch its own value: `produce` writes the next value
// into `in`, the graph copies it through its block to `out`, `consume` notes what arrived.
struct NumberedLaunches {
    size_t count = 0;
    uint32_t* in = nullptr;
    uint32_t* out = nullptr;
    uint32_t next = 0;
    std::vector<uint32_t> seen;  // one value per launch, or 0 where `out` was torn
};

void produce(void* data) {
    auto* launches = static_cast<NumberedLaunches*>(data);
    ++launches->next;
    for (size_t i = 0; i < launches->count; ++i) launches->in[i] = launches->next;
}

void consume(void* data) {
    auto* launches = static_cast<NumberedLaunches*>(data);
    const uint32_t first = launches->out[0];
    bool whole = true;
    for (size_t i = 0; i < launches->count; ++i) whole = whole && launches->out[i] == first;
    launches->seen.push_back(whole ? first : 0);
}

}  // namespace

TEST_CASE("launches of a graph on two streams run one after another, each with its own value",
          "[graph][pool]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    constexpr size_t kCount = 4096;
    constexpr uint32_t kLaunches = 40;
    cts::HostMemory in(kCount * 4), out(kCount * 4);
    NumberedLaunches launches;
    launches.count = kCount;
    launches.in = in.get<uint32_t>();
    launches.out = out.get<uint32_t>();
    cts::Stream capture, first, second;
    Graph graph;
    void* block = nullptr;
    HAL_REQUIRE_OK(halStreamBeginCapture(capture, HAL_CAPTURE_MODE_GLOBAL));
    HAL_REQUIRE_OK(halMallocAsync(&block, kCount * 4, capture));
    HAL_REQUIRE_OK(halLaunchHostFunc(capture, produce, &launches));
    HAL_REQUIRE_OK(halMemcpyAsync(block, kCount * 4, in.get(), kCount * 4,
                                  HAL_MEMCPY_HOST_TO_DEVICE, capture));
    HAL_REQUIRE_OK(halMemcpyAsync(out.get(), kCount * 4, block, kCount * 4,
                                  HAL_MEMCPY_DEVICE_TO_HOST, capture));
    HAL_REQUIRE_OK(halLaunchHostFunc(capture, consume, &launches));
    HAL_REQUIRE_OK(halFreeAsync(block, capture));
    HAL_REQUIRE_OK(halStreamEndCapture(capture, graph.out()));

    for (uint32_t i = 0; i < kLaunches; ++i) {
        HAL_REQUIRE_OK(halGraphLaunch(graph, i % 2 == 0 ? first.get() : second.get()));
    }
    HAL_REQUIRE_OK(halSynchronizeStream(first));
    HAL_REQUIRE_OK(halSynchronizeStream(second));
    // Overlapping launches would share `in`, the block and `out`: a launch would see another's
    // value, or a mix of two.
    std::vector<uint32_t> expected(kLaunches);
    for (uint32_t i = 0; i < kLaunches; ++i) expected[i] = i + 1;
    CHECK(launches.seen == expected);
}

TEST_CASE(
    "a copy whose source and destination overlap is refused at the call, eagerly and in a "
    "capture, which goes on",
    "[graph][memcpy][errors]") {
    constexpr size_t kBytes = 512;
    cts::DeviceMemory memory(kBytes);
    auto* base = static_cast<unsigned char*>(memory.get());
    cts::Stream stream;
    const auto refusesOverlaps = [&] {
        CHECK(halMemcpyAsync(base + 64, kBytes - 64, base, 128, HAL_MEMCPY_DEVICE_TO_DEVICE,
                             stream) == HAL_ERROR_INVALID_VALUE);
        CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("overlap"));
        CHECK(halMemcpyAsync(base, kBytes, base + 127, 128, HAL_MEMCPY_DEFAULT, stream) ==
              HAL_ERROR_INVALID_VALUE);
        // Two rows of 64 bytes, 128 apart, written 32 bytes after where they are read.
        CHECK(halMemcpy2DAsync(base + 32, 128, base, 128, 64, 2, HAL_MEMCPY_DEVICE_TO_DEVICE,
                               stream) == HAL_ERROR_INVALID_VALUE);
        CHECK_THAT(halGetLastErrorMessage(), Catch::Contains("overlap"));
    };
    refusesOverlaps();
    CHECK(halMemcpy(base + 1, kBytes - 1, base, 64, HAL_MEMCPY_DEVICE_TO_DEVICE) ==
          HAL_ERROR_INVALID_VALUE);
    HAL_REQUIRE_OK(halSynchronizeStream(stream));

    HAL_REQUIRE_OK(halStreamBeginCapture(stream, HAL_CAPTURE_MODE_GLOBAL));
    refusesOverlaps();
    CHECK(statusOf(stream) == HAL_CAPTURE_STATUS_ACTIVE);
    HAL_REQUIRE_OK(halMemsetAsync(base, kBytes, 0x44, kBytes / 2, stream));
    // Adjacent ranges do not overlap.
    HAL_REQUIRE_OK(halMemcpyAsync(base + kBytes / 2, kBytes / 2, base, kBytes / 2,
                                  HAL_MEMCPY_DEVICE_TO_DEVICE, stream));
    Graph graph;
    HAL_REQUIRE_OK(halStreamEndCapture(stream, graph.out()));
    HAL_REQUIRE_OK(halGraphLaunch(graph, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    std::vector<unsigned char> host(kBytes);
    HAL_REQUIRE_OK(halMemcpy(host.data(), kBytes, base, kBytes, HAL_MEMCPY_DEVICE_TO_HOST));
    CHECK(host == std::vector<unsigned char>(kBytes, 0x44));
}
