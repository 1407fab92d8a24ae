// The trace's view of the core: call spans on host threads, device spans on stream tracks,
// flows between them and the pool's counters.
//
// Tracks: each host thread is a track of the host process (pid = the process id, tid = the OS
// thread id). Each device is a process of its own (pid = kDevicePidBase + ordinal) whose tracks
// are its streams and whose counters are its pool's.
#include "hooks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "../device.hpp"
#include "../objects.hpp"

namespace polyhal::trace {

namespace {

// Above any Linux process id (at most 2^22), so device tracks never share a pid with the host.
constexpr int64_t kDevicePidBase = int64_t{1} << 24;

thread_local Call* t_call = nullptr;

struct StreamTrack {
    int64_t pid;
    uint64_t tid;
    const char* label;  // interned
    std::mutex mutex;
    uint64_t namedSession = 0;
    // The latest device span: the next operation starts no earlier than its end.
    uint64_t lastStart = 0;
    uint64_t lastEnd = 0;
    uint64_t lastSession = 0;
};

// Where a record happened: the host call that recorded the event.
struct RecordPoint {
    uint64_t tid;
    uint64_t ts;
    uint64_t session;
};

struct DeviceState {
    uint64_t namedSession = 0;
    uint64_t sampledSession = 0;
    allocator::PoolStats sampled{};  // as of the latest sample in `sampledSession`
    uint64_t recordedSession = 0;    // a counter record was written in this session
};

struct Tracks {
    std::mutex mutex;
    std::unordered_map<const halStream_t*, std::shared_ptr<StreamTrack>> streams;
    std::unordered_map<const halEvent_t*, RecordPoint> records;
    std::unordered_map<int, DeviceState> devices;
    uint64_t nextTrack = 0;
    std::atomic<bool> used{false};       // anything traced yet: destruction hooks look only then
    std::atomic<uint64_t> forgotten{0};  // streams forgotten so far: invalidates threads' caches
};

Tracks& tracks() {
    static auto* instance = new Tracks();  // never destroyed: backend threads may outlive statics
    return *instance;
}

int64_t devicePid(const Device* device) {
    return kDevicePidBase + device->ordinal;
}

Record metadata(const char* name, int64_t pid, uint64_t tid, const char* value) {
    Record record;
    record.phase = 'M';
    record.name = name;
    record.pid = pid;
    record.tid = tid;
    record.ts = 0;
    record.args[0] = Arg{"name", value};
    return record;
}

// Names `device`'s process once per session. Called with the tracks' mutex held.
void nameDevice(const Device* device, uint64_t sessionId) {
    DeviceState& state = tracks().devices[device->ordinal];
    if (state.namedSession == sessionId) return;
    state.namedSession = sessionId;
    const std::string name = fmt::format("device {}: {} ({})", device->ordinal, device->info.name,
                                         device->backend->name);
    emit(metadata("process_name", devicePid(device), 0, intern(name)), sessionId);
    Record order = metadata("process_sort_index", devicePid(device), 0, nullptr);
    order.args[0] = Arg{"sort_index", nullptr, 1 + device->ordinal};
    emit(order, sessionId);
}

// The track a thread looked up last: calls on one stream in a row skip the shared map.
struct CachedTrack {
    const halStream_t* stream = nullptr;
    uint64_t session = 0;
    uint64_t forgotten = 0;
    std::shared_ptr<StreamTrack> track;
};

// The track of `stream`, made on first use; named once per session.
std::shared_ptr<StreamTrack> trackOf(const halStream_t* stream, uint64_t sessionId) {
    static thread_local CachedTrack cached;
    Tracks& all = tracks();
    const uint64_t forgotten = all.forgotten.load(std::memory_order_acquire);
    if (cached.stream == stream && cached.session == sessionId && cached.forgotten == forgotten) {
        return cached.track;
    }
    all.used.store(true, std::memory_order_relaxed);
    std::shared_ptr<StreamTrack> track;
    {
        std::lock_guard<std::mutex> lock(all.mutex);
        std::shared_ptr<StreamTrack>& slot = all.streams[stream];
        if (!slot) {
            slot = std::make_shared<StreamTrack>();
            slot->pid = devicePid(stream->device);
            slot->tid = ++all.nextTrack;
            const bool isDefault =
                stream->device->defaultStream.load(std::memory_order_acquire) == stream;
            slot->label = intern(
                isDefault ? fmt::format("device {} default stream", stream->device->ordinal)
                          : fmt::format("device {} stream {}", stream->device->ordinal, slot->tid));
        }
        nameDevice(stream->device, sessionId);
        track = slot;
    }
    {
        std::lock_guard<std::mutex> lock(track->mutex);
        if (track->namedSession != sessionId) {
            track->namedSession = sessionId;
            emit(metadata("thread_name", track->pid, track->tid, track->label), sessionId);
        }
    }
    cached = CachedTrack{stream, sessionId, forgotten, track};
    return track;
}

// A flow from (pid, tid, ts) to the calling thread's span, now.
void flowToHere(int64_t pid, uint64_t tid, uint64_t ts, const char* name, uint64_t sessionId) {
    Record start;
    start.phase = 's';
    start.name = name;
    start.category = "flow";
    start.pid = pid;
    start.tid = tid;
    start.ts = ts;
    start.id = newFlowId();
    Record end = threadRecord('f', name, "flow", now());
    end.id = start.id;
    emit(start, sessionId);
    emit(end, sessionId);
}

// A flow from the last device span of `track` (if this session saw one) to the calling thread.
void flowFromLastSpan(StreamTrack& track, uint64_t sessionId) {
    uint64_t start = 0, end = 0;
    {
        std::lock_guard<std::mutex> lock(track.mutex);
        if (track.lastSession != sessionId) return;
        start = track.lastStart;
        end = track.lastEnd;
    }
    flowToHere(track.pid, track.tid, start + (end - start) / 2, "synchronize", sessionId);
}

// Runs a host function of the trace (plugin.h's signature) on `stream`; false where the backend
// runs none or refused this one.
bool enqueueHostFunction(halStream_t* stream, halHostFn fn, void* data) {
    const Device* device = stream->device;
    return device->supports(HAL_DEVICE_CAP_HOST_FUNCTIONS) &&
           device->vtable->launchHostFunc != nullptr &&
           device->vtable->launchHostFunc(stream->native, fn, data) == HAL_SUCCESS;
}

}  // namespace

// One operation's device span: a host function enqueued before the operation notes when the
// stream reached it, one enqueued behind it when it completed. Shared by the two host functions
// and the submitting call, and freed by the last of them.
struct Timing {
    std::atomic<int> owners{1};
    std::atomic<uint64_t> started{0};  // 0 until the host function before the operation ran
    std::shared_ptr<StreamTrack> track;
    uint64_t session;
    uint64_t submitted;  // the submitting call's start
    const char* name = nullptr;
    const char* operation = nullptr;
    int64_t bytes = -1;

    void release() {
        if (owners.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }
};

namespace {

void runStartMarker(void* pending) {
    Timing* timing = static_cast<Timing*>(pending);
    timing->started.store(now(), std::memory_order_release);
    timing->release();
}

// Runs in stream order right after the operation: it completed now. It started when the host
// function before it ran; failing that (the backend refused that one), when it was submitted or
// when the operation before it completed, whichever is later.
void runEndMarker(void* pending) {
    Timing* timing = static_cast<Timing*>(pending);
    const uint64_t end = now();
    StreamTrack& track = *timing->track;
    Record span;
    span.phase = 'X';
    span.name = timing->name;
    span.category = "device";
    span.pid = track.pid;
    span.tid = track.tid;
    const uint64_t started = timing->started.load(std::memory_order_acquire);
    {
        std::lock_guard<std::mutex> lock(track.mutex);
        const uint64_t previous = track.lastSession == timing->session ? track.lastEnd : 0;
        span.ts = started != 0 ? started : std::max(previous, timing->submitted);
        span.ts = std::min(span.ts, end);
        track.lastStart = span.ts;
        track.lastEnd = end;
        track.lastSession = timing->session;
    }
    span.dur = end - span.ts;
    size_t arg = 0;
    span.args[arg++] = Arg{"operation", timing->operation};
    span.args[arg++] = Arg{"queuedNs", nullptr,
                           static_cast<int64_t>(span.ts - std::min(span.ts, timing->submitted))};
    if (timing->bytes >= 0) span.args[arg++] = Arg{"bytes", nullptr, timing->bytes};
    emit(span, timing->session);
    timing->release();
}

// The first sample of `device`'s pool in a session, taken before the first call that samples it
// does its work, so that what that call does (an out-of-memory synchronisation) is seen.
void takeBaseline(Device* device, uint64_t sessionId) {
    Tracks& all = tracks();
    std::lock_guard<std::mutex> lock(all.mutex);
    DeviceState& state = all.devices[device->ordinal];
    if (state.sampledSession == sessionId) return;
    state.sampled = device->pool->stats();
    state.sampledSession = sessionId;
}

// Samples `device`'s pool when `call` ends: a counter record where a counter changed since the
// previous sample (or none was taken yet), markers for what happened in between.
void sampleCounters(Device* device, uint64_t sessionId, const Call& call) {
    const allocator::PoolStats stats = device->pool->stats();
    const uint64_t ts = now();
    bool changed = true;
    uint64_t newOom = 0, newFrees = 0;
    {
        Tracks& all = tracks();
        std::lock_guard<std::mutex> lock(all.mutex);
        nameDevice(device, sessionId);
        DeviceState& state = all.devices[device->ordinal];
        if (state.sampledSession == sessionId) {
            const allocator::PoolStats& last = state.sampled;
            changed = state.recordedSession != sessionId || stats.bytesInUse != last.bytesInUse ||
                      stats.bytesReserved != last.bytesReserved ||
                      stats.bytesPending != last.bytesPending;
            newOom = stats.oomSynchronized - last.oomSynchronized;
            newFrees = stats.backendFrees - last.backendFrees;
        }
        state.sampledSession = sessionId;
        state.sampled = stats;
        if (changed) state.recordedSession = sessionId;
    }
    if (changed) {
        Record counter;
        counter.phase = 'C';
        counter.name = "pool";
        counter.category = "pool";
        counter.pid = devicePid(device);
        counter.ts = ts;
        counter.args[0] = Arg{"bytesInUse", nullptr, static_cast<int64_t>(stats.bytesInUse)};
        counter.args[1] = Arg{"bytesReserved", nullptr, static_cast<int64_t>(stats.bytesReserved)};
        counter.args[2] = Arg{"bytesPending", nullptr, static_cast<int64_t>(stats.bytesPending)};
        emit(counter, sessionId);
    }

    Record marker;
    marker.phase = 'i';
    marker.category = "pool";
    marker.pid = devicePid(device);
    marker.ts = ts;
    if (newOom > 0) {
        marker.name = "pool out-of-memory synchronisation";
        marker.args[0] = Arg{"times", nullptr, static_cast<int64_t>(newOom)};
        marker.args[1] = Arg{"call", call.function};
        emit(marker, sessionId);
    }
    if (call.trimKeep >= 0) {
        marker.name = "pool trim";
        marker.args[0] = Arg{"bytesToKeep", nullptr, call.trimKeep};
        marker.args[1] = Arg{"bytesReleased", nullptr,
                             static_cast<int64_t>(call.reservedBefore - stats.bytesReserved)};
        emit(marker, sessionId);
    } else if (newFrees > 0) {
        marker.name = "pool released segments";
        marker.args[0] = Arg{"segments", nullptr, static_cast<int64_t>(newFrees)};
        marker.args[1] = Arg{"call", call.function};
        emit(marker, sessionId);
    }
}

}  // namespace

Call* currentCall() noexcept {
    return t_call;
}

CallSpan::CallSpan(const char* function) noexcept : call_{function, now(), session()} {
    call_.outer = t_call;
    t_call = &call_;
}

CallSpan::~CallSpan() {
    if (!finished_) finish(HAL_ERROR_UNKNOWN);
}

void CallSpan::finish(halError result) noexcept {
    finished_ = true;
    t_call = call_.outer;
    try {
        if (call_.poolDevice != nullptr) sampleCounters(call_.poolDevice, call_.session, call_);
    } catch (...) {
    }
    Record span = threadRecord('X', call_.function, "api", call_.start);
    span.dur = now() - call_.start;
    size_t arg = 0;
    if (call_.stream != nullptr) span.args[arg++] = Arg{"stream", call_.stream};
    if (call_.kernel != nullptr) span.args[arg++] = Arg{"kernel", call_.kernel};
    if (call_.bytes >= 0) span.args[arg++] = Arg{"bytes", nullptr, call_.bytes};
    span.args[arg++] = Arg{"result", halGetErrorName(result)};
    emit(span, call_.session);
}

namespace slow {

void noteStream(const halStream_t* stream) noexcept {
    Call* call = t_call;
    if (call == nullptr) return;
    try {
        call->stream = trackOf(stream, call->session)->label;
        // Work on a stream can change its pool (completions observed, blocks freed in stream
        // order): the pool is sampled when the call ends.
        if (call->poolDevice == nullptr) {
            call->poolDevice = stream->device;
            takeBaseline(stream->device, call->session);
        }
    } catch (...) {
    }
}

void noteKernel(const halFunction_t* function) noexcept {
    Call* call = t_call;
    if (call == nullptr) return;
    try {
        std::lock_guard<std::mutex> lock(function->module->mutex);
        for (const auto& [name, known] : function->module->functions) {
            if (known == function) call->kernel = intern(name);
        }
    } catch (...) {
    }
}

void notePool(Device* device) noexcept {
    Call* call = t_call;
    if (call == nullptr) return;
    call->poolDevice = device;
    try {
        takeBaseline(device, call->session);
    } catch (...) {
    }
}

void poolTrimming(Device* device, size_t bytesToKeep) noexcept {
    Call* call = t_call;
    if (call == nullptr) return;
    call->poolDevice = device;
    call->trimKeep = static_cast<int64_t>(std::min<size_t>(bytesToKeep, INT64_MAX));
    call->reservedBefore = device->pool->stats().bytesReserved;
}

Timing* beforeSubmit(halStream_t* stream) noexcept {
    Call* call = t_call;
    if (call == nullptr) return nullptr;
    try {
        auto* timing = new Timing();
        timing->track = trackOf(stream, call->session);
        timing->session = call->session;
        timing->submitted = call->start;
        timing->owners.store(2, std::memory_order_relaxed);
        if (!enqueueHostFunction(stream, runStartMarker, timing)) timing->release();
        return timing;
    } catch (...) {
        return nullptr;
    }
}

void submitted(halStream_t* stream, const char* operation, Timing* timing) noexcept {
    if (Call* call = t_call) {
        timing->name = call->kernel != nullptr ? call->kernel : operation;
        timing->bytes = call->bytes;
    } else {
        timing->name = operation;
    }
    timing->operation = operation;
    // The end marker takes the caller's share.
    if (!enqueueHostFunction(stream, runEndMarker, timing)) timing->release();
}

void abandon(Timing* timing) noexcept {
    timing->release();
}

void eventRecorded(const halEvent_t* event) noexcept {
    Call* call = t_call;
    if (call == nullptr) return;
    try {
        Tracks& all = tracks();
        all.used.store(true, std::memory_order_relaxed);
        std::lock_guard<std::mutex> lock(all.mutex);
        all.records[event] = RecordPoint{threadId(), now(), call->session};
    } catch (...) {
    }
}

void eventAwaited(const halEvent_t* event) noexcept {
    Call* call = t_call;
    if (call == nullptr) return;
    RecordPoint point{};
    {
        Tracks& all = tracks();
        std::lock_guard<std::mutex> lock(all.mutex);
        const auto found = all.records.find(event);
        if (found == all.records.end() || found->second.session != call->session) return;
        point = found->second;
    }
    flowToHere(hostPid(), point.tid, point.ts, "event", call->session);
}

void streamSynchronized(const halStream_t* stream) noexcept {
    Call* call = t_call;
    if (call == nullptr) return;
    try {
        flowFromLastSpan(*trackOf(stream, call->session), call->session);
    } catch (...) {
    }
}

void deviceSynchronized(const Device* device) noexcept {
    Call* call = t_call;
    if (call == nullptr) return;
    std::vector<std::shared_ptr<StreamTrack>> awaited;
    try {
        Tracks& all = tracks();
        std::lock_guard<std::mutex> lock(all.mutex);
        for (const auto& [stream, track] : all.streams) {
            if (stream->device == device) awaited.push_back(track);
        }
    } catch (...) {
        return;
    }
    for (const auto& track : awaited) flowFromLastSpan(*track, call->session);
}

uint64_t hostFunctionLaunched() noexcept {
    Call* call = t_call;
    if (call == nullptr) return 0;
    Record start = threadRecord('s', "host function", "flow", now());
    start.id = newFlowId();
    emit(start, call->session);
    return start.id;
}

}  // namespace slow

void hostFunctionRan(uint64_t flow, uint64_t sessionId, uint64_t start, uint64_t end) noexcept {
    if (flow == 0) return;
    nameThisThread("host functions");
    Record span = threadRecord('X', "host function", "host", start);
    span.dur = end - start;
    Record arrival = span;
    arrival.phase = 'f';
    arrival.name = "host function";
    arrival.category = "flow";
    arrival.id = flow;
    emit(span, sessionId);
    emit(arrival, sessionId);
}

void streamDestroyed(const halStream_t* stream) noexcept {
    Tracks& all = tracks();
    if (!all.used.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lock(all.mutex);
    if (all.streams.erase(stream) > 0) all.forgotten.fetch_add(1, std::memory_order_release);
}

void eventDestroyed(const halEvent_t* event) noexcept {
    Tracks& all = tracks();
    if (!all.used.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lock(all.mutex);
    all.records.erase(event);
}

}  // namespace polyhal::trace
