// Pool events, synchronisation on out of memory, returning segments, statistics.
#include "device_pool_impl.hpp"

#include <algorithm>

namespace polyhal::allocator {

void DevicePool::Impl::ensureMarkers(const std::vector<Use>& uses) {
    for (const Use& use : uses) {
        Stream* stream = use.stream;
        std::lock_guard<std::mutex> lock(stream->mutex);
        // A removed stream got its last event in removeStream.
        if (!stream->alive || stream->isComplete(use.ticket)) continue;
        if (!stream->markers.empty() && stream->markers.back().ticket >= use.ticket) continue;
        // On failure the use stays unobserved until a later event or a synchronisation
        // covers it; the block is only held longer.
        (void)recordMarker(stream);
    }
}

halError DevicePool::Impl::recordMarker(Stream* stream) {
    DeviceEvent event = nullptr;
    halError result = events_.acquire(&event);
    if (result != HAL_SUCCESS) return result;
    // Read before recording: every ticket up to this one is already in the backend's queue.
    const uint64_t ticket = stream->submitted.load(std::memory_order_acquire);
    result = device_.recordEvent(event, stream->device);
    if (result != HAL_SUCCESS) {
        device_.destroyEvent(event);
        return result;
    }
    stream->markers.push_back({event, ticket});
    outstandingMarkers_.fetch_add(1, std::memory_order_acq_rel);
    return HAL_SUCCESS;
}

std::vector<Stream*> DevicePool::Impl::streamsSnapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Stream*> streams;
    streams.reserve(streams_.size());
    for (const auto& stream : streams_) streams.push_back(stream.get());
    return streams;
}

bool DevicePool::Impl::probeMarkers() {
    bool advanced = false;
    for (Stream* stream : streamsSnapshot()) {
        std::lock_guard<std::mutex> lock(stream->mutex);
        while (!stream->markers.empty()) {
            const Marker marker = stream->markers.front();
            if (device_.queryEvent(marker.event) != HAL_SUCCESS) break;
            noteCompleted(stream, marker.ticket);
            stream->markers.pop_front();
            outstandingMarkers_.fetch_sub(1, std::memory_order_acq_rel);
            events_.release(marker.event);
            advanced = true;
        }
    }
    return advanced;
}

void DevicePool::Impl::synchronizeEverything() {
    for (Stream* stream : streamsSnapshot()) {
        Marker newest{nullptr, 0};
        {
            std::lock_guard<std::mutex> lock(stream->mutex);
            const uint64_t tail = stream->submitted.load(std::memory_order_acquire);
            if (stream->isComplete(tail)) continue;
            const bool covered = !stream->markers.empty() && stream->markers.back().ticket >= tail;
            if (!covered && stream->alive && recordMarker(stream) != HAL_SUCCESS) continue;
            if (stream->markers.empty()) continue;
            // Taken out of the queue so that no one recycles it while this thread waits on it
            // without holding the stream's lock (the waited work may need that lock).
            newest = stream->markers.back();
            stream->markers.pop_back();
            outstandingMarkers_.fetch_sub(1, std::memory_order_acq_rel);
        }
        const halError result = device_.synchronizeEvent(newest.event);
        if (result != HAL_SUCCESS) {
            device_.destroyEvent(newest.event);
            continue;
        }
        std::lock_guard<std::mutex> lock(stream->mutex);
        noteCompleted(stream, newest.ticket);
        // Older events are finished too: the stream is in order.
        while (!stream->markers.empty() && stream->markers.front().ticket <= newest.ticket) {
            events_.release(stream->markers.front().event);
            stream->markers.pop_front();
            outstandingMarkers_.fetch_sub(1, std::memory_order_acq_rel);
        }
        events_.release(newest.event);
    }
}

std::vector<DevicePool::Impl::Released> DevicePool::Impl::detachReleasable(size_t keep) {
    std::vector<Released> released;
    for (size_t i = 0; i < segments_.size();) {
        Segment* segment = segments_[i].get();
        const Block* block = segment->first;
        const bool free =
            segment->wholeBlock() && block->state == BlockState::Ready && isComplete(block);
        if (!free || stats_.bytesReserved - segment->size < keep) {
            ++i;
            continue;
        }
        released.push_back({reinterpret_cast<void*>(segment->base), segment->size});
        detachSegment(segment);  // moves the last segment to index i
    }
    if (!released.empty()) updateAddressRange();
    return released;
}

void DevicePool::Impl::detachSegment(Segment* segment) {
    Block* block = segment->first;
    removeReady(block);
    blocks_.erase(block->address);
    arena_.give(block);
    stats_.bytesReserved -= segment->size;
    stats_.bytesCached -= segment->size;
    auto it = std::find_if(segments_.begin(), segments_.end(),
                           [&](const auto& owned) { return owned.get() == segment; });
    std::swap(*it, segments_.back());
    segments_.pop_back();
}

halError DevicePool::Impl::releaseSegments(const std::vector<Released>& segments) {
    if (segments.empty()) return HAL_SUCCESS;
    halError first = HAL_SUCCESS;
    uint64_t freed = 0;
    for (const Released& segment : segments) {
        const halError result = device_.freeMemory(segment.base);
        if (result == HAL_SUCCESS) {
            ++freed;
        } else if (first == HAL_SUCCESS) {
            first = result;
        }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.backendFrees += freed;
    return first;
}

void DevicePool::Impl::updateAddressRange() {
    uintptr_t lowest = ~uintptr_t{0};
    uintptr_t highest = 0;
    for (const auto& segment : segments_) {
        lowest = std::min(lowest, segment->base);
        highest = std::max(highest, segment->base + segment->size);
    }
    lowest_.store(lowest, std::memory_order_release);
    highest_.store(highest, std::memory_order_release);
}

halError DevicePool::Impl::trim(size_t bytesToKeep) {
    if (outstandingMarkers_.load(std::memory_order_acquire) > 0) probeMarkers();
    std::vector<Released> released;
    std::vector<Use> lateUses;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        unparkAll(&lateUses);
        // Releasing finished memory is safe whatever the reuse switches say.
        const Policy rules{policy().proven, true};
        promoteAll(rules, true);
        coalesceAll(rules);
        released = detachReleasable(bytesToKeep);
    }
    if (!lateUses.empty()) ensureMarkers(lateUses);
    return releaseSegments(released);
}

halError DevicePool::Impl::reset() {
    std::vector<Released> released;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& stream : streams_) {
            std::lock_guard<std::mutex> streamLock(stream->mutex);
            // The device is idle: every event has finished.
            noteCompleted(stream.get(), stream->submitted.load(std::memory_order_acquire));
            for (const Marker& marker : stream->markers) events_.release(marker.event);
            outstandingMarkers_.fetch_sub(stream->markers.size(), std::memory_order_acq_rel);
            stream->markers.clear();
            stream->pending.clear();
        }
        for (const auto& stream : streams_) {
            std::lock_guard<SpinLock> cacheLock(stream->cache.lock);
            stream->cache.clear();
        }
        for (Block* block : coalesceQueue_) block->awaitingCoalesce = false;
        coalesceQueue_.clear();
        for (const auto& segment : segments_) {
            for (Block* block = segment->first; block != nullptr;) {
                Block* next = block->next;
                if (block->state == BlockState::Ready) removeReady(block);
                arena_.give(block);
                block = next;
            }
            released.push_back({reinterpret_cast<void*>(segment->base), segment->size});
        }
        segments_.clear();
        blocks_.clear();
        live_.clear();
        stats_.bytesInUse = stats_.bytesReserved = 0;
        stats_.bytesCached = stats_.bytesPending = 0;
        updateAddressRange();
    }
    events_.clear();
    return releaseSegments(released);
}

PoolStats DevicePool::Impl::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    PoolStats stats = stats_;
    // The pool counts parked blocks as in use; the program freed them.
    for (const auto& stream : streams_) {
        std::lock_guard<SpinLock> cacheLock(stream->cache.lock);
        const size_t parked = stream->cache.parkedBytes();
        stats.bytesInUse -= parked;
        stats.bytesCached += parked;
        stats.reusedSameStream += stream->cache.reuses;
    }
    return stats;
}

PoolAttributes DevicePool::Impl::attributes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return attributes_;
}

void DevicePool::Impl::setAttributes(const PoolAttributes& attributes) {
    std::lock_guard<std::mutex> lock(mutex_);
    attributes_ = attributes;
    // Pending blocks must be checked again under the new rules.
    for (const auto& stream : streams_) {
        std::lock_guard<std::mutex> streamLock(stream->mutex);
        stream->checkedClockVersion = ~uint64_t{0};
    }
}

}  // namespace polyhal::allocator
