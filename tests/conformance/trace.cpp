// Tracing (halTraceStart, halTraceStop, halTraceRangePush, halTraceRangePop): a known program
// traced, and the file read back and checked against the Chrome Trace Event format's rules and
// against what the program did.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "json_reader.hpp"
#include "kernels.hpp"
#include "pool_helpers.hpp"

namespace {

// One trace record as the tests read it.
struct Record {
    std::string ph, name, cat;
    int64_t pid = 0, tid = 0;
    double ts = 0, dur = 0;
    int64_t id = -1;
    const cts::json::Value* args = nullptr;

    double end() const { return ts + dur; }
    bool contains(double t) const { return t >= ts && t <= end(); }
    std::string text(const char* key) const {
        const cts::json::Value* value = args != nullptr ? args->find(key) : nullptr;
        return value != nullptr && value->isString() ? value->string : std::string();
    }
    double number(const char* key) const {
        const cts::json::Value* value = args != nullptr ? args->find(key) : nullptr;
        return value != nullptr && value->isNumber() ? value->number : -1;
    }
};

// A file in the temporary folder, removed at the end of the test.
class TraceFile {
  public:
    TraceFile() {
        const char* folder = std::getenv("TMPDIR");
        std::string pattern =
            std::string(folder != nullptr ? folder : "/tmp") + "/polyhal-trace-XXXXXX.json";
        const int fd = mkstemps(pattern.data(), 5);
        REQUIRE(fd >= 0);
        close(fd);
        path_ = pattern;
    }
    ~TraceFile() { std::remove(path_.c_str()); }
    const char* path() const { return path_.c_str(); }

  private:
    std::string path_;
};

// The parsed file and its records.
struct Trace {
    cts::json::Value document;
    std::vector<Record> records;

    std::vector<const Record*> select(const std::string& ph, const std::string& name) const {
        std::vector<const Record*> found;
        for (const Record& r : records) {
            if (r.ph == ph && r.name == name) found.push_back(&r);
        }
        return found;
    }
    // The one complete span of `category` named `name`; fails the test unless there is exactly
    // one.
    const Record& only(const std::string& category, const std::string& name) const {
        std::vector<const Record*> found;
        for (const Record& r : records) {
            if (r.ph == "X" && r.cat == category && r.name == name) found.push_back(&r);
        }
        INFO("spans of category " << category << " named " << name);
        REQUIRE(found.size() == 1);
        return *found.front();
    }
    // The thread_name given to (pid, tid), or "".
    std::string threadName(int64_t pid, int64_t tid) const {
        for (const Record& r : records) {
            if (r.ph == "M" && r.name == "thread_name" && r.pid == pid && r.tid == tid) {
                return r.text("name");
            }
        }
        return "";
    }
    // The complete spans of the track named `label`, in time order.
    std::vector<const Record*> track(const std::string& label) const {
        std::vector<const Record*> spans;
        for (const Record& r : records) {
            if (r.ph == "X" && threadName(r.pid, r.tid) == label) spans.push_back(&r);
        }
        // Spans of one track may start at the same time (an operation the clock saw take no
        // time, then the next); those keep the order they were written in.
        std::stable_sort(spans.begin(), spans.end(),
                         [](const Record* a, const Record* b) { return a->ts < b->ts; });
        return spans;
    }
    // The flow start whose arrival lies inside `to`, named `name`, or nullptr.
    const Record* flowInto(const Record& to, const std::string& name) const {
        for (const Record& arrival : records) {
            if (arrival.ph != "f" || arrival.name != name || arrival.pid != to.pid ||
                arrival.tid != to.tid || !to.contains(arrival.ts)) {
                continue;
            }
            for (const Record& start : records) {
                if (start.ph == "s" && start.id == arrival.id) return &start;
            }
        }
        return nullptr;
    }
};

// Reads and parses `path`, failing the test where the JSON is malformed.
void load(const char* path, Trace* trace) {
    std::ifstream in(path);
    REQUIRE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    std::string error;
    INFO("parsing " << path);
    REQUIRE(cts::json::parse(text.str(), &trace->document, &error));
    INFO(error);
    const cts::json::Value* events = trace->document.find("traceEvents");
    REQUIRE(events != nullptr);
    REQUIRE(events->type == cts::json::Value::Type::Array);
    for (const cts::json::Value& event : events->array) {
        REQUIRE(event.type == cts::json::Value::Type::Object);
        Record r;
        for (const char* key : {"ph", "name", "pid", "tid", "ts"}) {
            INFO("a record without the required field " << key);
            REQUIRE(event.find(key) != nullptr);
        }
        r.ph = event.find("ph")->string;
        r.name = event.find("name")->string;
        if (const auto* cat = event.find("cat")) r.cat = cat->string;
        r.pid = static_cast<int64_t>(event.find("pid")->number);
        r.tid = static_cast<int64_t>(event.find("tid")->number);
        r.ts = event.find("ts")->number;
        if (r.ph == "X") {
            REQUIRE(event.find("dur") != nullptr);
            r.dur = event.find("dur")->number;
            REQUIRE(r.dur >= 0);
        }
        if (r.ph == "s" || r.ph == "f") {
            REQUIRE(event.find("id") != nullptr);
            r.id = static_cast<int64_t>(event.find("id")->number);
        }
        if (r.ph == "f") {
            REQUIRE(event.find("bp") != nullptr);
            REQUIRE(event.find("bp")->string == "e");
        }
        r.args = event.find("args");
        trace->records.push_back(r);
    }
}

// The format's rules: known phases; begin and end balanced and nested on each thread (in file
// order, which is each thread's order); each flow id started once and ended once, later, each
// end inside a slice of its thread; counters with numeric arguments.
void checkFormat(const Trace& trace) {
    const std::set<std::string> phases = {"X", "B", "E", "i", "s", "f", "C", "M"};
    std::map<std::pair<int64_t, int64_t>, std::vector<double>> open;
    std::map<int64_t, int> starts, ends;
    for (const Record& r : trace.records) {
        INFO("record " << r.ph << " " << r.name);
        REQUIRE(phases.count(r.ph) == 1);
        if (r.ph == "B") open[{r.pid, r.tid}].push_back(r.ts);
        if (r.ph == "E") {
            auto& stack = open[{r.pid, r.tid}];
            REQUIRE(!stack.empty());
            REQUIRE(stack.back() <= r.ts);
            stack.pop_back();
        }
        if (r.ph == "s") ++starts[r.id];
        if (r.ph == "f") ++ends[r.id];
        if (r.ph == "C") {
            REQUIRE(r.args != nullptr);
            for (const auto& [key, value] : r.args->object) REQUIRE(value.isNumber());
        }
    }
    for (const auto& [thread, stack] : open) REQUIRE(stack.empty());
    REQUIRE(starts.size() == ends.size());
    for (const auto& [id, count] : starts) {
        INFO("flow " << id);
        REQUIRE(count == 1);
        REQUIRE(ends[id] == 1);
    }
    for (const Record& arrival : trace.records) {
        if (arrival.ph != "f") continue;
        const Record* start = nullptr;
        bool enclosed = false;
        for (const Record& r : trace.records) {
            if (r.ph == "s" && r.id == arrival.id) start = &r;
            if (r.ph == "X" && r.pid == arrival.pid && r.tid == arrival.tid &&
                r.contains(arrival.ts)) {
                enclosed = true;
            }
        }
        INFO("flow " << arrival.name << " " << arrival.id);
        REQUIRE(start != nullptr);
        REQUIRE(start->ts <= arrival.ts);
        REQUIRE(enclosed);
    }
}

std::atomic<int> g_hostFunctionRuns{0};

void countRun(void*) {
    g_hostFunctionRuns.fetch_add(1);
}

// A host function that marks a range of its own: both calls are allowed there.
void rangeInside(void* results) {
    auto* result = static_cast<halError*>(results);
    result[0] = halTraceRangePush("inside the host function");
    result[1] = halTraceRangePop();
}

}  // namespace

TEST_CASE("A traced program has each call, stream operation, flow and pool counter in its trace",
          "[trace]") {
    const bool deviceSpans =
        (cts::deviceProperties().capabilities & HAL_DEVICE_CAP_HOST_FUNCTIONS) != 0;
    cts::Module module;
    halFunction fill = nullptr;
    const bool kernel = cts::loadKernel("fill_u32", module, &fill);
    TraceFile file;
    cts::Stream a, b;
    cts::Event event;
    constexpr uint32_t kCount = 4096;
    constexpr size_t kBytes = kCount * sizeof(uint32_t);
    cts::HostMemory host(kBytes);
    g_hostFunctionRuns = 0;

    HAL_REQUIRE_OK(halTraceStart(file.path()));
    HAL_REQUIRE_OK(halTraceRangePush("step"));
    void* buffer = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&buffer, kBytes, a));
    HAL_REQUIRE_OK(halRecordEvent(event, a));  // moved by the second record: no wait follows it
    HAL_REQUIRE_OK(halMemsetAsync(buffer, kBytes, 0, kBytes, a));
    if (kernel) {
        const uint32_t value = 7, n = kCount;
        HAL_REQUIRE_OK(
            cts::launch1d(fill, n, 64, {cts::arg(buffer), cts::arg(value), cts::arg(n)}, a));
    }
    HAL_REQUIRE_OK(halRecordEvent(event, a));
    HAL_REQUIRE_OK(halStreamWaitEvent(b, event));
    HAL_REQUIRE_OK(
        halMemcpyAsync(host.get(), kBytes, buffer, kBytes, HAL_MEMCPY_DEVICE_TO_HOST, b));
    const bool hostFunctions = deviceSpans;
    if (hostFunctions) HAL_REQUIRE_OK(halLaunchHostFunc(b, countRun, nullptr));
    HAL_REQUIRE_OK(halFreeAsync(buffer, b));
    HAL_REQUIRE_OK(halSynchronizeStream(b));
    HAL_REQUIRE_OK(halSynchronizeDevice());
    HAL_REQUIRE_OK(halTraceRangePop());
    halMemPoolStats stats = {};
    stats.size = sizeof stats;
    HAL_REQUIRE_OK(halMemPoolGetStats(0, &stats));
    HAL_REQUIRE_OK(halTraceStop());
    if (kernel) REQUIRE(static_cast<const uint32_t*>(host.get())[kCount - 1] == 7u);

    Trace trace;
    load(file.path(), &trace);
    checkFormat(trace);
    const cts::json::Value* other = trace.document.find("otherData");
    REQUIRE(other != nullptr);
    REQUIRE(other->find("truncated") != nullptr);
    REQUIRE_FALSE(other->find("truncated")->boolean);

    // Each call once, on this thread, with its stream, size and result.
    const Record& malloc = trace.only("api", "halMallocAsync");
    const std::string trackA = malloc.text("stream");
    REQUIRE(!trackA.empty());
    REQUIRE(malloc.number("bytes") == kBytes);
    REQUIRE(malloc.text("result") == "HAL_SUCCESS");
    REQUIRE(trace.select("X", "halRecordEvent").size() == (deviceSpans ? 4u : 2u));
    const Record& wait = trace.only("api", "halStreamWaitEvent");
    const std::string trackB = wait.text("stream");
    REQUIRE(!trackB.empty());
    REQUIRE(trackB != trackA);
    const Record& copy = trace.only("api", "halMemcpyAsync");
    REQUIRE(copy.text("stream") == trackB);
    REQUIRE(copy.number("bytes") == kBytes);
    REQUIRE(trace.only("api", "halMemsetAsync").text("stream") == trackA);
    REQUIRE(trace.only("api", "halFreeAsync").text("stream") == trackB);
    const Record& sync = trace.only("api", "halSynchronizeStream");
    for (const Record* call : {&malloc, &wait, &copy, &sync}) {
        REQUIRE(call->pid == malloc.pid);
        REQUIRE(call->tid == malloc.tid);
    }
    if (kernel) REQUIRE(trace.only("api", "halLaunchKernel").text("kernel") == "fill_u32");

    // The range encloses the calls made inside it.
    const auto begins = trace.select("B", "step");
    REQUIRE(begins.size() == 1);
    REQUIRE(begins.front()->ts <= malloc.ts);
    REQUIRE(begins.front()->tid == malloc.tid);

    // The wait's flow comes from the second record, the one it waited for.
    std::vector<const Record*> records;
    for (const Record* r : trace.select("X", "halRecordEvent")) {
        if (r->cat == "api") records.push_back(r);
    }
    std::sort(records.begin(), records.end(),
              [](const Record* x, const Record* y) { return x->ts < y->ts; });
    REQUIRE(records.size() == 2);
    const Record* waitedFrom = trace.flowInto(wait, "event");
    REQUIRE(waitedFrom != nullptr);
    REQUIRE(waitedFrom->tid == records[1]->tid);
    REQUIRE(records[1]->contains(waitedFrom->ts));
    REQUIRE_FALSE(records[0]->contains(waitedFrom->ts));

    // Pool counters: one when the block was allocated and one when it was freed at least, the
    // last matching halMemPoolGetStats.
    const auto counters = trace.select("C", "pool");
    REQUIRE(counters.size() >= 2);
    bool sawBlockInUse = false;
    for (const Record* counter : counters) {
        sawBlockInUse = sawBlockInUse || counter->number("bytesInUse") >= kBytes;
    }
    REQUIRE(sawBlockInUse);
    const Record* last =
        *std::max_element(counters.begin(), counters.end(),
                          [](const Record* x, const Record* y) { return x->ts < y->ts; });
    REQUIRE(last->number("bytesInUse") == static_cast<double>(stats.bytesInUse));
    REQUIRE(last->number("bytesReserved") == static_cast<double>(stats.bytesReserved));
    REQUIRE(last->number("bytesPending") == static_cast<double>(stats.bytesPending));

    if (!deviceSpans) {
        cts::skip("device spans and host functions: the backend runs no host functions");
        return;
    }

    // Device spans: each operation once on its stream's track, in stream order, not
    // overlapping, each starting no earlier than its call.
    const auto spansA = trace.track(trackA);
    const auto spansB = trace.track(trackB);
    std::vector<std::string> namesA, namesB;
    for (const Record* span : spansA) namesA.push_back(span->name);
    for (const Record* span : spansB) namesB.push_back(span->name);
    std::vector<std::string> expectedA = {"halRecordEvent", "halMemsetAsync"};
    if (kernel) expectedA.push_back("fill_u32");
    expectedA.push_back("halRecordEvent");
    REQUIRE(namesA == expectedA);
    REQUIRE(namesB ==
            std::vector<std::string>{"halStreamWaitEvent", "halMemcpyAsync", "halLaunchHostFunc"});
    for (const auto* spans : {&spansA, &spansB}) {
        for (size_t i = 0; i + 1 < spans->size(); ++i) {
            INFO("span " << (*spans)[i]->name << " then " << (*spans)[i + 1]->name);
            REQUIRE((*spans)[i]->end() <= (*spans)[i + 1]->ts);
        }
    }
    REQUIRE(spansB.front()->ts >= wait.ts);
    REQUIRE(spansB[1]->ts >= copy.ts);
    // Spans timed by the device's clock are placed on the host's through an offset measured to
    // within microseconds (docs/trace.md): compared with another stream's span or with what a
    // host thread saw, they may be that far off.
    for (const auto* spans : {&spansA, &spansB}) {
        for (const Record* span : *spans) {
            INFO("span " << span->name);
            REQUIRE((span->text("clock") == "device" || span->text("clock") == "host functions"));
        }
    }
    const double slack = spansB.front()->text("clock") == "device" ? 50.0 : 0.0;  // µs
    // The wait ends once the work recorded before the event has: after A's operation before it.
    REQUIRE(spansB.front()->end() + slack >= spansA[spansA.size() - 2]->end());

    // The host function ran once, inside its stream's span, reached by a flow from its launch.
    REQUIRE(g_hostFunctionRuns == 1);
    const Record& run = trace.only("host", "host function");
    const Record& launch = trace.only("api", "halLaunchHostFunc");
    const Record* launched = trace.flowInto(run, "host function");
    REQUIRE(launched != nullptr);
    REQUIRE(launched->tid == launch.tid);
    REQUIRE(launch.contains(launched->ts));
    REQUIRE(run.ts + slack >= spansB[2]->ts);
    REQUIRE(run.end() <= spansB[2]->end() + slack);

    // The stream synchronisation is reached by a flow from B's last operation.
    const Record* synchronized = trace.flowInto(sync, "synchronize");
    REQUIRE(synchronized != nullptr);
    REQUIRE(trace.threadName(synchronized->pid, synchronized->tid) == trackB);
    REQUIRE(spansB.back()->contains(synchronized->ts));
}

TEST_CASE("A failed kernel's span is marked where the failure was found", "[trace][failure]") {
    cts::Module module;
    halFunction failing = nullptr;
    if (!cts::loadKernel("fail_with_code", module, &failing)) return;
    cts::Stream stream;
    TraceFile file;
    HAL_REQUIRE_OK(halTraceStart(file.path()));
    const halDim3 one{1, 1, 1};
    HAL_REQUIRE_OK(halLaunchKernel(failing, one, one, 0, nullptr, 0, stream));
    REQUIRE(halSynchronizeStream(stream) == HAL_ERROR_LAUNCH_FAILED);
    const std::string reported = halGetLastErrorMessage();
    HAL_REQUIRE_OK(halTraceStop());

    Trace trace;
    load(file.path(), &trace);
    checkFormat(trace);
    const Record& kernel = trace.only("device", "fail_with_code");
    const auto marks = trace.select("i", "launch failed");
    REQUIRE(marks.size() == 1);
    const Record& mark = *marks.front();
    CHECK(mark.cat == "device");
    CHECK(mark.pid == kernel.pid);
    CHECK(mark.tid == kernel.tid);
    CHECK(mark.ts == Approx(kernel.end()).margin(0.002));  // microseconds, as written
    CHECK(mark.text("kernel") == "fail_with_code");
    CHECK(mark.text("call") == "halSynchronizeStream");
    CHECK(mark.text("error") == reported);
}

TEST_CASE("A trace past its record cap ends with a truncated marker and stays valid", "[trace]") {
    TraceFile file;
    setenv("POLYHAL_TRACE_MAX_EVENTS", "40", 1);
    const halError started = halTraceStart(file.path());
    unsetenv("POLYHAL_TRACE_MAX_EVENTS");
    HAL_REQUIRE_OK(started);
    int device = -1;
    for (int i = 0; i < 200; ++i) HAL_REQUIRE_OK(halGetDevice(&device));
    HAL_REQUIRE_OK(halTraceStop());

    Trace trace;
    load(file.path(), &trace);
    checkFormat(trace);
    const cts::json::Value* other = trace.document.find("otherData");
    REQUIRE(other != nullptr);
    REQUIRE(other->find("truncated")->boolean);
    REQUIRE(other->find("droppedEvents")->number >= 160);
    const auto markers = trace.select("i", "trace truncated");
    REQUIRE(markers.size() == 1);
    REQUIRE(markers.front()->number("droppedEvents") == other->find("droppedEvents")->number);
    // The cap, then the marker and the process name written past it.
    REQUIRE(trace.records.size() == 42);
}

TEST_CASE("Spans of calls made from several threads at once are each in the trace", "[trace]") {
    TraceFile file;
    constexpr int kThreads = 4, kCalls = 500;
    HAL_REQUIRE_OK(halTraceStart(file.path()));
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            int device = -1;
            for (int i = 0; i < kCalls; ++i) {
                if (halTraceRangePush("worker") != HAL_SUCCESS) ++failures;
                if (halGetDevice(&device) != HAL_SUCCESS) ++failures;
                if (halTraceRangePop() != HAL_SUCCESS) ++failures;
            }
        });
    }
    for (auto& thread : threads) thread.join();
    HAL_REQUIRE_OK(halTraceStop());
    REQUIRE(failures == 0);

    Trace trace;
    load(file.path(), &trace);
    checkFormat(trace);
    std::map<int64_t, int> callsPerThread;
    for (const Record* span : trace.select("X", "halGetDevice")) ++callsPerThread[span->tid];
    REQUIRE(callsPerThread.size() == kThreads);
    for (const auto& [tid, calls] : callsPerThread) REQUIRE(calls == kCalls);
    REQUIRE(trace.select("B", "worker").size() == kThreads * kCalls);
}

TEST_CASE("A thread making records faster than one drain period loses none", "[trace]") {
    TraceFile file;
    // Far more records than one thread's buffer holds, in much less time than the writer's
    // period: the writer must be woken when the buffer fills, and the thread wait for it.
    constexpr int kRanges = 40000;
    HAL_REQUIRE_OK(halTraceStart(file.path()));
    for (int i = 0; i < kRanges; ++i) {
        HAL_REQUIRE_OK(halTraceRangePush("burst"));
        HAL_REQUIRE_OK(halTraceRangePop());
    }
    HAL_REQUIRE_OK(halTraceStop());
    Trace trace;
    load(file.path(), &trace);
    checkFormat(trace);
    REQUIRE_FALSE(trace.document.find("otherData")->find("truncated")->boolean);
    REQUIRE(trace.select("B", "burst").size() == kRanges);
    REQUIRE(std::count_if(trace.records.begin(), trace.records.end(),
                          [](const Record& r) { return r.ph == "E"; }) == kRanges);
}

TEST_CASE("Names that are not UTF-8 are written as U+FFFD, so the trace stays JSON", "[trace]") {
    TraceFile file;
    HAL_REQUIRE_OK(halTraceStart(file.path()));
    HAL_REQUIRE_OK(halTraceRangePush("bad\xff\xfe caf\xc3\xa9 \xe2\x82"));
    HAL_REQUIRE_OK(halTraceRangePop());
    HAL_REQUIRE_OK(halTraceStop());
    std::ifstream in(file.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Valid sequences are kept as they are, invalid bytes and a cut sequence replaced.
    REQUIRE(text.find("bad\\ufffd\\ufffd caf\xc3\xa9 \\ufffd\\ufffd") != std::string::npos);
    Trace trace;
    load(file.path(), &trace);
    checkFormat(trace);
}

TEST_CASE("Spans of one stream fed by two threads at once do not overlap", "[trace]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    TraceFile file;
    cts::DeviceMemory memory(4096);
    cts::Stream stream;
    constexpr int kThreads = 2, kCalls = 300;
    HAL_REQUIRE_OK(halTraceStart(file.path()));
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < kCalls; ++i) {
                if (halMemsetAsync(memory.get(), memory.size(), t, memory.size(), stream) !=
                    HAL_SUCCESS) {
                    ++failures;
                }
            }
        });
    }
    for (auto& thread : threads) thread.join();
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    HAL_REQUIRE_OK(halTraceStop());
    REQUIRE(failures == 0);
    Trace trace;
    load(file.path(), &trace);
    checkFormat(trace);
    std::string label;
    for (const Record& r : trace.records) {
        if (r.ph == "X" && r.cat == "api" && r.name == "halMemsetAsync") label = r.text("stream");
    }
    REQUIRE(!label.empty());
    const auto spans = trace.track(label);
    REQUIRE(spans.size() == kThreads * kCalls);
    // A span may start exactly where the previous one ended: the times are whole nanoseconds,
    // written as microseconds, so the sum ts + dur is compared to within half a nanosecond.
    for (size_t i = 0; i + 1 < spans.size(); ++i) {
        INFO("span " << i);
        REQUIRE(spans[i]->end() <= spans[i + 1]->ts + 0.0005);
    }
}

TEST_CASE("halTraceStart and halTraceStop refuse what they cannot do", "[trace]") {
    TraceFile file;
    REQUIRE(halTraceStart("/nonexistent-folder/trace.json") == HAL_ERROR_INVALID_VALUE);
    REQUIRE(std::string(halGetLastErrorMessage()).find("/nonexistent-folder") != std::string::npos);
    REQUIRE(halTraceStop() == HAL_ERROR_INVALID_VALUE);
    HAL_REQUIRE_OK(halTraceStart(file.path()));
    REQUIRE(halTraceStart(file.path()) == HAL_ERROR_INVALID_VALUE);
    REQUIRE(std::string(halGetLastErrorMessage()).find(file.path()) != std::string::npos);
    HAL_REQUIRE_OK(halTraceStop());
    Trace trace;
    load(file.path(), &trace);
    checkFormat(trace);
}

TEST_CASE("halTraceStart refuses a POLYHAL_TRACE_MAX_EVENTS that is not a count", "[trace]") {
    TraceFile file;
    // strtoull alone reads "-5" as 2^64-5 and " 5" as 5; the last is 2^64.
    for (const char* value : {"-5", "0", "abc", "5x", " 5", "+5", "18446744073709551616"}) {
        INFO("POLYHAL_TRACE_MAX_EVENTS='" << value << "'");
        setenv("POLYHAL_TRACE_MAX_EVENTS", value, 1);
        const halError started = halTraceStart(file.path());
        unsetenv("POLYHAL_TRACE_MAX_EVENTS");
        if (started == HAL_SUCCESS) halTraceStop();
        REQUIRE(started == HAL_ERROR_INVALID_VALUE);
        REQUIRE(std::string(halGetLastErrorMessage()) ==
                std::string("halTraceStart: POLYHAL_TRACE_MAX_EVENTS='") + value +
                    "' is not a whole number from 1 to 18446744073709551615");
    }
    setenv("POLYHAL_TRACE_MAX_EVENTS", "18446744073709551615", 1);
    const halError started = halTraceStart(file.path());
    unsetenv("POLYHAL_TRACE_MAX_EVENTS");
    HAL_REQUIRE_OK(started);
    HAL_REQUIRE_OK(halTraceStop());
}

TEST_CASE("Ranges nest on their thread, and a range opened untraced closes untraced", "[trace]") {
    TraceFile file;
    HAL_REQUIRE_OK(halTraceRangePush("before the trace"));
    HAL_REQUIRE_OK(halTraceStart(file.path()));
    HAL_REQUIRE_OK(halTraceRangePush("outer \"quoted\" \\ name"));
    HAL_REQUIRE_OK(halTraceRangePush("inner"));
    HAL_REQUIRE_OK(halTraceRangePop());
    HAL_REQUIRE_OK(halTraceRangePop());
    HAL_REQUIRE_OK(halTraceRangePop());  // the one opened before the trace: no end record
    REQUIRE(halTraceRangePop() == HAL_ERROR_INVALID_VALUE);
    HAL_REQUIRE_OK(halTraceStop());
    Trace trace;
    load(file.path(), &trace);
    checkFormat(trace);
    REQUIRE(trace.select("B", "outer \"quoted\" \\ name").size() == 1);
    REQUIRE(trace.select("B", "inner").size() == 1);
    REQUIRE(trace.select("B", "before the trace").empty());
}

TEST_CASE("Ranges open when the trace stops, or cut by its cap, end where it stopped", "[trace]") {
    TraceFile file;
    setenv("POLYHAL_TRACE_MAX_EVENTS", "3", 1);
    const halError started = halTraceStart(file.path());
    unsetenv("POLYHAL_TRACE_MAX_EVENTS");
    HAL_REQUIRE_OK(started);
    HAL_REQUIRE_OK(halTraceRangePush("outer"));
    HAL_REQUIRE_OK(halTraceRangePush("cut"));
    int device = -1;
    for (int i = 0; i < 4; ++i) HAL_REQUIRE_OK(halGetDevice(&device));
    HAL_REQUIRE_OK(halTraceRangePop());  // past the cap: its end is not written
    HAL_REQUIRE_OK(halTraceStop());
    HAL_REQUIRE_OK(halTraceRangePop());  // after the stop: no record, no error
    Trace trace;
    load(file.path(), &trace);
    checkFormat(trace);
    REQUIRE(trace.select("B", "outer").size() == 1);
    REQUIRE(trace.select("B", "cut").size() == 1);
    std::vector<const Record*> closed;
    for (const Record& r : trace.records) {
        if (r.ph == "E") closed.push_back(&r);
    }
    REQUIRE(closed.size() == 2);
    for (const Record* end : closed) REQUIRE(end->text("closedBy") == "trace stop");
}

// A forked child of a multi-threaded process may only allocate where the allocator takes its
// locks across fork(): glibc's does; the sanitizers' of GCC 12 do not (a child can stop for
// good in its first allocation), and ThreadSanitizer ends a child that starts a thread.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CTS_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__) || defined(CTS_SANITIZED)
#define CTS_SKIP_UNLESS_FORK_MAY_ALLOCATE()                                           \
    do {                                                                              \
        cts::skip("the sanitizer's allocator does not take its locks across fork()"); \
        return;                                                                       \
    } while (0)
#else
#define CTS_SKIP_UNLESS_FORK_MAY_ALLOCATE() (void)0
#endif

// Forks a child that traces on its own (only calls that reach no device: the backend's threads
// are not in the child) into `childFile`, and waits for it; true when it ended with its trace
// written. A child still running after 30 s is stopped for good: it is killed. `childPid`, if
// given, receives the child's process id.
namespace {
bool forkTracingChild(const std::string& childFile, pid_t* childPid = nullptr) {
    const pid_t child = fork();
    if (child < 0) return false;
    if (childPid != nullptr) *childPid = child;
    if (child == 0) {
        const bool traced = halTraceStart(childFile.c_str()) == HAL_SUCCESS &&
                            halTraceRangePush("child") == HAL_SUCCESS &&
                            halTraceRangePop() == HAL_SUCCESS && halTraceStop() == HAL_SUCCESS;
        _exit(traced ? 0 : 1);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    int status = 0;
    for (;;) {
        const pid_t waited = waitpid(child, &status, WNOHANG);
        if (waited == child) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (waited < 0 && errno != EINTR) return false;
        if (std::chrono::steady_clock::now() > deadline) {
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}
}  // namespace

TEST_CASE("A forked child's trace carries the child's process and thread ids", "[trace]") {
    CTS_SKIP_UNLESS_FORK_MAY_ALLOCATE();
    TraceFile parentFile, childFile;
    HAL_REQUIRE_OK(halTraceStart(parentFile.path()));
    HAL_REQUIRE_OK(halTraceRangePush("parent"));
    HAL_REQUIRE_OK(halTraceRangePop());
    const pid_t parent = getpid();
    const bool childTraced = forkTracingChild(childFile.path());
    HAL_REQUIRE_OK(halTraceStop());
    REQUIRE(childTraced);
    Trace trace;
    load(childFile.path(), &trace);
    checkFormat(trace);
    const auto begins = trace.select("B", "child");
    REQUIRE(begins.size() == 1);
    const int64_t child = begins.front()->pid;
    REQUIRE(child != parent);
    REQUIRE(begins.front()->tid == child);  // the child's one thread, the one that forked
    REQUIRE(trace.threadName(child, child) == "main thread");
    REQUIRE(trace.select("B", "parent").empty());
}

TEST_CASE("A forked child given its parent's trace file writes <path>.<pid> instead", "[trace]") {
    CTS_SKIP_UNLESS_FORK_MAY_ALLOCATE();
    TraceFile parentFile;
    HAL_REQUIRE_OK(halTraceStart(parentFile.path()));
    HAL_REQUIRE_OK(halTraceRangePush("parent"));
    HAL_REQUIRE_OK(halTraceRangePop());
    pid_t child = 0;
    const bool childTraced = forkTracingChild(parentFile.path(), &child);
    HAL_REQUIRE_OK(halTraceStop());
    const std::string childFile = std::string(parentFile.path()) + "." + std::to_string(child);
    REQUIRE(childTraced);
    Trace parentTrace, childTrace;
    load(parentFile.path(), &parentTrace);
    load(childFile.c_str(), &childTrace);
    std::remove(childFile.c_str());
    checkFormat(parentTrace);
    checkFormat(childTrace);
    CHECK(parentTrace.select("B", "parent").size() == 1);
    CHECK(parentTrace.select("B", "child").empty());
    CHECK(childTrace.select("B", "child").size() == 1);
}

TEST_CASE("A child forked during its parent's trace keeps off that file after the trace ended",
          "[trace]") {
    CTS_SKIP_UNLESS_FORK_MAY_ALLOCATE();
    TraceFile parentFile;
    HAL_REQUIRE_OK(halTraceStart(parentFile.path()));
    HAL_REQUIRE_OK(halTraceRangePush("parent"));
    HAL_REQUIRE_OK(halTraceRangePop());
    // The child starts its trace only once the parent has completed and closed its file, which
    // is then locked by no one.
    int go[2];
    REQUIRE(pipe(go) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        char byte = 0;
        const bool traced = read(go[0], &byte, 1) == 1 &&
                            halTraceStart(parentFile.path()) == HAL_SUCCESS &&
                            halTraceRangePush("child") == HAL_SUCCESS &&
                            halTraceRangePop() == HAL_SUCCESS && halTraceStop() == HAL_SUCCESS;
        _exit(traced ? 0 : 1);
    }
    const halError stopped = halTraceStop();
    const char byte = 1;
    const bool told = write(go[1], &byte, 1) == 1;
    int status = 0;
    const bool waited = waitpid(child, &status, 0) == child;
    close(go[0]);
    close(go[1]);
    const std::string childFile = std::string(parentFile.path()) + "." + std::to_string(child);
    Trace parentTrace, childTrace;
    load(parentFile.path(), &parentTrace);
    load(childFile.c_str(), &childTrace);
    std::remove(childFile.c_str());
    HAL_REQUIRE_OK(stopped);
    REQUIRE((told && waited && WIFEXITED(status) && WEXITSTATUS(status) == 0));
    CHECK(parentTrace.select("B", "parent").size() == 1);
    CHECK(childTrace.select("B", "child").size() == 1);
}

TEST_CASE("A child forked while other threads record and the writer drains traces on its own",
          "[trace]") {
    CTS_SKIP_UNLESS_FORK_MAY_ALLOCATE();
    // A small cap keeps the parent's file small; records past it still pass through the buffers
    // and the writer, under their locks, which is what the forks must not catch held.
    TraceFile parentFile;
    setenv("POLYHAL_TRACE_MAX_EVENTS", "1000", 1);
    const halError started = halTraceStart(parentFile.path());
    unsetenv("POLYHAL_TRACE_MAX_EVENTS");
    HAL_REQUIRE_OK(started);
    std::atomic<bool> done{false};
    std::vector<std::thread> recorders;
    for (int t = 0; t < 2; ++t) {
        recorders.emplace_back([&done, t] {
            const std::string name = "busy " + std::to_string(t);
            while (!done.load()) {
                halTraceRangePush(name.c_str());
                halTraceRangePop();
            }
        });
    }
    // Nothing here may end the case early: the recorders are joined and the trace stopped first.
    constexpr int kChildren = 25;
    std::vector<std::unique_ptr<TraceFile>> childFiles;
    int exited = 0;
    for (int i = 0; i < kChildren; ++i) {
        childFiles.push_back(std::make_unique<TraceFile>());
        if (!forkTracingChild(childFiles.back()->path())) break;
        ++exited;
    }
    done = true;
    for (std::thread& recorder : recorders) recorder.join();
    HAL_REQUIRE_OK(halTraceStop());
    REQUIRE(exited == kChildren);
    for (const auto& childFile : childFiles) {
        Trace trace;
        load(childFile->path(), &trace);
        REQUIRE(trace.select("B", "child").size() == 1);
    }
}

TEST_CASE("A stream made after another was destroyed gets a track of its own", "[trace]") {
    TraceFile file;
    cts::DeviceMemory memory(256);
    HAL_REQUIRE_OK(halTraceStart(file.path()));
    std::vector<std::string> labels;
    for (int i = 0; i < 2; ++i) {
        halStream stream = nullptr;
        HAL_REQUIRE_OK(halCreateStream(&stream));  // the arena may hand out the same handle
        HAL_REQUIRE_OK(halMemsetAsync(memory.get(), memory.size(), i, memory.size(), stream));
        HAL_REQUIRE_OK(halSynchronizeStream(stream));
        HAL_REQUIRE_OK(halDestroyStream(stream));
    }
    HAL_REQUIRE_OK(halTraceStop());
    Trace trace;
    load(file.path(), &trace);
    checkFormat(trace);
    const auto memsets = trace.select("X", "halMemsetAsync");
    std::vector<std::string> streams;
    for (const Record* span : memsets) {
        if (span->cat == "api") streams.push_back(span->text("stream"));
    }
    REQUIRE(streams.size() == 2);
    REQUIRE(!streams[0].empty());
    REQUIRE(streams[0] != streams[1]);
}

TEST_CASE("A trace marks the pool's out-of-memory synchronisation and its trims", "[trace][oom]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    if (cts::tooLargeToExhaust()) return;
    cts::startWithEmptyCache();
    cts::Stream s0, s1;
    std::vector<void*> blocks = cts::fillDevice(s0);
    // s1 uses every block behind a gate while the host frees them on s0: they are pending.
    cts::Gate gate;
    std::atomic<bool> usesDone{false};
    cts::orderAfter(s0, s1);
    gate.enqueue(s1);
    for (void* block : blocks) HAL_REQUIRE_OK(halMemsetAsync(block, cts::kFillBlock, 0, 1, s1));
    cts::enqueueSet(s1, &usesDone);
    for (void* block : blocks) HAL_REQUIRE_OK(halFreeAsync(block, s0));
    gate.open();
    REQUIRE(cts::waitUntil([&] { return usesDone.load(); }));
    // Nothing told the pool that the uses are over: only a synchronisation can reclaim them.
    cts::AttributeOverride noObservation(HAL_MEMPOOL_ATTR_REUSE_OBSERVED_COMPLETION, 0);

    TraceFile file;
    const halMemPoolStats before = cts::poolStats();
    HAL_REQUIRE_OK(halTraceStart(file.path()));
    void* block = nullptr;
    HAL_REQUIRE_OK(halMallocAsync(&block, cts::kFillBlock, s0));
    HAL_REQUIRE_OK(halFreeAsync(block, s0));
    HAL_REQUIRE_OK(halSynchronizeDevice());
    HAL_REQUIRE_OK(halMemPoolTrim(cts::currentDevice(), 0));
    const halMemPoolStats after = cts::poolStats();
    HAL_REQUIRE_OK(halTraceStop());
    REQUIRE(after.oomSynchronized == before.oomSynchronized + 1);
    REQUIRE(after.bytesReserved < before.bytesReserved);

    Trace trace;
    load(file.path(), &trace);
    checkFormat(trace);
    const auto oom = trace.select("i", "pool out-of-memory synchronisation");
    REQUIRE(oom.size() == 1);
    REQUIRE(oom.front()->text("call") == "halMallocAsync");
    const Record& malloc = trace.only("api", "halMallocAsync");
    REQUIRE(malloc.contains(oom.front()->ts));
    const auto trims = trace.select("i", "pool trim");
    REQUIRE(trims.size() == 1);
    REQUIRE(trims.front()->number("bytesToKeep") == 0);
    const Record& trim = trace.only("api", "halMemPoolTrim");
    REQUIRE(trim.contains(trims.front()->ts));
    REQUIRE(trims.front()->number("bytesReleased") > 0);
    // The counters end where the pool is.
    const auto counters = trace.select("C", "pool");
    REQUIRE(!counters.empty());
    REQUIRE(counters.back()->number("bytesReserved") == static_cast<double>(after.bytesReserved));
}

TEST_CASE("A host function may mark a range, which lies on the thread that ran it", "[trace]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    TraceFile file;
    cts::Stream stream;
    halError results[2] = {HAL_ERROR_UNKNOWN, HAL_ERROR_UNKNOWN};
    HAL_REQUIRE_OK(halTraceStart(file.path()));
    HAL_REQUIRE_OK(halLaunchHostFunc(stream, rangeInside, results));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    HAL_REQUIRE_OK(halTraceStop());
    REQUIRE(results[0] == HAL_SUCCESS);
    REQUIRE(results[1] == HAL_SUCCESS);
    Trace trace;
    load(file.path(), &trace);
    checkFormat(trace);
    const auto begins = trace.select("B", "inside the host function");
    REQUIRE(begins.size() == 1);
    const Record& run = trace.only("host", "host function");
    REQUIRE(begins.front()->tid == run.tid);
    REQUIRE(run.contains(begins.front()->ts));
}
