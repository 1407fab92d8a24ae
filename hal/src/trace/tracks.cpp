// The tracks of streams and devices: made on first use, named once per trace.
#include "tracks.hpp"

#include <fmt/format.h>

#include <string>

#include "../device.hpp"
#include "../objects.hpp"

namespace polyhal::trace {

namespace {

// Above any Linux process id (at most 2^22), so device tracks never share a pid with the host.
constexpr int64_t kDevicePidBase = int64_t{1} << 24;

// The track a thread looked up last: calls on one stream in a row skip the shared map.
struct CachedTrack {
    const halStream_t* stream = nullptr;
    uint64_t session = 0;
    uint64_t forgotten = 0;
    std::shared_ptr<StreamTrack> track;
};

}  // namespace

Tracks& tracks() {
    static auto* instance = new Tracks();
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

void streamDestroyed(const halStream_t* stream) noexcept {
    Tracks& all = tracks();
    if (!all.used.load(std::memory_order_relaxed)) return;
    std::lock_guard<std::mutex> lock(all.mutex);
    if (all.streams.erase(stream) > 0) all.forgotten.fetch_add(1, std::memory_order_release);
}

}  // namespace polyhal::trace
