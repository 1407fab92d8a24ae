// The pool's counters and markers: each device's pool sampled when a call that may change it
// ends.
#include <algorithm>
#include <mutex>

#include "../device.hpp"
#include "tracks.hpp"

namespace polyhal::trace {

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

namespace slow {

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

}  // namespace slow

}  // namespace polyhal::trace
