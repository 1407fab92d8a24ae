// The trace's state shared by its hook files: the tracks of streams and devices, and the pool
// samples of each device. Internal to hal/src/trace.
#ifndef POLYHAL_HAL_SRC_TRACE_TRACKS_HPP_
#define POLYHAL_HAL_SRC_TRACE_TRACKS_HPP_

#include <polyhal/allocator/pool_stats.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "hooks.hpp"

namespace polyhal::trace {

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
    // The latest kernel's device span, which a failure of the stream found later is marked at.
    const char* lastKernel = nullptr;
    uint64_t lastKernelEnd = 0;
    uint64_t lastKernelSession = 0;
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

// The one instance, never destroyed: backend threads may outlive static destructors.
Tracks& tracks();

// The trace process of `device`'s tracks and counters.
int64_t devicePid(const Device* device);

// A metadata record naming the process or thread (pid, tid) `value`.
Record metadata(const char* name, int64_t pid, uint64_t tid, const char* value);

// Names `device`'s process once per session. Called with the tracks' mutex held.
void nameDevice(const Device* device, uint64_t sessionId);

// The track of `stream`, made on first use; named once per session.
std::shared_ptr<StreamTrack> trackOf(const halStream_t* stream, uint64_t sessionId);

// The calling thread's public call while a trace is written (hooks.cpp).
extern thread_local Call* t_call;

// The first sample of `device`'s pool in a session, and the sample when a call ends
// (pool_counters.cpp).
void takeBaseline(Device* device, uint64_t sessionId);
void sampleCounters(Device* device, uint64_t sessionId, const Call& call);

}  // namespace polyhal::trace

#endif  // POLYHAL_HAL_SRC_TRACE_TRACKS_HPP_
