// The trace's view of the core: call spans on host threads and the flows between spans.
//
// Tracks: each host thread is a track of the host process (pid = the process id, tid = the OS
// thread id). Each device is a process of its own whose tracks are its streams (tracks.cpp),
// with device spans (device_spans.cpp) and its pool's counters (pool_counters.cpp).
#include "hooks.hpp"

#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "../device.hpp"
#include "../objects.hpp"
#include "tracks.hpp"

namespace polyhal::trace {

thread_local Call* t_call = nullptr;

namespace {

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

}  // namespace

Call* currentCall() noexcept {
    return t_call;
}

void CallSpan::open(const char* function) noexcept {
    new (&call_) Call{function, now(), session()};
    call_.outer = t_call;
    t_call = &call_;
    open_ = true;
}

void CallSpan::close(halError result) noexcept {
    open_ = false;
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
        call->kernel = intern(function->name);
    } catch (...) {
    }
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

void eventDestroyed(const halEvent_t* event) noexcept {
    Tracks& all = tracks();
    if (!all.used.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lock(all.mutex);
    all.records.erase(event);
}

}  // namespace polyhal::trace
