// Streams and the happens-before hooks the core calls around backend operations.
#include "device_pool_impl.hpp"

namespace polyhal::allocator {

Stream* DevicePool::Impl::addStream(DeviceStream deviceStream) {
    std::lock_guard<std::mutex> lock(mutex_);
    // Reuse the record of a removed stream once all its work is observed finished: its tickets
    // carry on, so nothing recorded about the old stream can speak for the new one.
    for (const auto& stream : streams_) {
        std::lock_guard<std::mutex> streamLock(stream->mutex);
        if (!stream->alive &&
            stream->isComplete(stream->submitted.load(std::memory_order_acquire))) {
            stream->alive = true;
            stream->device = deviceStream;
            stream->orderedAfter.clear();
            stream->orderedAfterChanged();
            return stream.get();
        }
    }
    streams_.push_back(std::make_unique<Stream>(deviceStream, self_, &nodes_));
    return streams_.back().get();
}

halError DevicePool::Impl::removeStream(Stream* stream) {
    std::vector<Use> lateUses;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        unparkStream(stream, &lateUses);
    }
    if (!lateUses.empty()) ensureMarkers(lateUses);
    std::lock_guard<std::mutex> lock(stream->mutex);
    halError result = HAL_SUCCESS;
    const uint64_t tail = stream->submitted.load(std::memory_order_acquire);
    const bool covered = !stream->markers.empty() && stream->markers.back().ticket >= tail;
    if (!stream->isComplete(tail) && !covered) result = recordMarker(stream);
    stream->alive = false;
    return result;
}

VectorClock DevicePool::Impl::capture(Stream* stream) const {
    VectorClock clock;
    captureInto(stream, &clock);
    return clock;
}

void DevicePool::Impl::captureInto(Stream* stream, VectorClock* clock) const {
    std::lock_guard<std::mutex> lock(stream->mutex);
    *clock = stream->orderedAfter;  // copy-assignment reuses the storage `clock` already has
    clock->raise(stream, stream->submitted.load(std::memory_order_acquire));
}

VectorClock DevicePool::Impl::captureDevice(bool withRemovedStreams) const {
    VectorClock clock(self_);
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& stream : streams_) {
        std::lock_guard<std::mutex> streamLock(stream->mutex);
        if (!stream->alive && !withRemovedStreams) continue;
        clock.merge(stream->orderedAfter);
        clock.raise(stream.get(), stream->submitted.load(std::memory_order_acquire));
    }
    return clock;
}

void DevicePool::Impl::streamWaited(Stream* stream, const VectorClock& snapshot) {
    std::lock_guard<std::mutex> lock(stream->mutex);
    if (snapshot.origin() == self_) {
        stream->orderedAfter.merge(snapshot);
        stream->orderedAfterChanged();
    }
    // The wait is an operation of its own: a clock holding this ticket holds the merge too.
    stream->submitted.fetch_add(1, std::memory_order_acq_rel);
}

void DevicePool::Impl::observeCompleted(const VectorClock& snapshot) {
    if (snapshot.origin() != self_) return;
    for (const VectorClock::Entry& entry : snapshot.entries()) {
        noteCompleted(entry.stream, entry.ticket);
    }
}

void DevicePool::Impl::noteCompleted(Stream* stream, uint64_t ticket) {
    if (stream->observeCompleted(ticket)) {
        completionEpoch_.fetch_add(1, std::memory_order_acq_rel);
    }
}

halError DevicePool::Impl::synchronized(const VectorClock& snapshot) {
    observeCompleted(snapshot);
    uint64_t threshold;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        threshold = attributes_.releaseThreshold;
        if (stats_.bytesReserved <= threshold) return HAL_SUCCESS;
    }
    return trim(threshold);
}

}  // namespace polyhal::allocator
