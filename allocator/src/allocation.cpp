// allocate(): the reuse order 1..5 of docs/pool.md.
#include "device_pool_impl.hpp"
#include "layout.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace polyhal::allocator {

namespace {

// How many size classes (small) or distinct sizes (large) of another stream's bins are tried
// before giving up on that stream: keeps a miss cheap when that stream's blocks are not yet
// ordered before this one.
constexpr int kOtherStreamTries = 8;

uint64_t PoolStats::*counterFor(ReusePath path) {
    switch (path) {
    case ReusePath::SameStream: return &PoolStats::reusedSameStream;
    case ReusePath::ProvenOrder: return &PoolStats::reusedProvenOrder;
    case ReusePath::ObservedComplete: return &PoolStats::reusedObservedComplete;
    }
    return &PoolStats::reusedSameStream;
}

}  // namespace

halError DevicePool::Impl::allocate(size_t size, Stream* stream, void** ptr) {
    if (size == 0) {
        device_.setErrorMessage("cannot allocate 0 bytes");
        return HAL_ERROR_INVALID_VALUE;
    }
    if (size > layout::kMaxRequest) {
        char message[160];
        std::snprintf(message, sizeof message,
                      "out of memory: %zu bytes requested, more than the pool can address", size);
        device_.setErrorMessage(message);
        return HAL_ERROR_OUT_OF_MEMORY;
    }
    const size_t rounded = layout::roundRequest(size);
    const bool small = layout::isSmall(rounded);
    // 0: a block of exactly this size that the stream itself freed, without the pool lock.
    if (small && stream->cache.mayHoldParked(rounded) &&
        allocateParked(rounded, size, stream, ptr)) {
        return HAL_SUCCESS;
    }
    Policy rules;
    std::vector<Use> blocked;
    {
        std::vector<Use> lateUses;
        Candidate found;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            // Every stream's parked blocks join the search, so that no segment is added while
            // freed memory could serve the request.
            unparkAll(&lateUses);
            rules = policy();
            found = findReusable(rounded, small, stream, rules, &blocked);
            if (found.block != nullptr) {
                *ptr = carve(found.block, rounded, size, stream, counterFor(found.path));
            }
        }
        if (!lateUses.empty()) ensureMarkers(lateUses);
        if (found.block != nullptr) return HAL_SUCCESS;
    }
    // 3 (continued): record pool events where a fitting block waits for its owner's free to be
    // seen finished, learn what the pool's events have seen finish (at most one failed query
    // per stream), and look again. A second round covers owners found blocked by the first.
    for (int round = 0; round < 2 && rules.observed; ++round) {
        if (!blocked.empty()) ensureMarkers(blocked);
        blocked.clear();
        if (outstandingMarkers_.load(std::memory_order_acquire) == 0 || !probeMarkers()) break;
        std::lock_guard<std::mutex> lock(mutex_);
        Candidate found = findReusable(rounded, small, stream, rules, &blocked);
        if (found.block != nullptr) {
            *ptr = carve(found.block, rounded, size, stream, counterFor(found.path));
            return HAL_SUCCESS;
        }
    }
    // 4: a new segment; on a device with no room for the usual one, the smallest that serves
    // the request. Nothing is synchronised while the device can still serve the allocation.
    const size_t preferred = layout::segmentSizeFor(rounded);
    const size_t minimal = layout::minimalSegmentSizeFor(rounded);
    halError grown = grow(preferred, rounded, size, small, stream, &PoolStats::newSegments, ptr);
    if (grown == HAL_ERROR_OUT_OF_MEMORY && minimal < preferred) {
        grown = grow(minimal, rounded, size, small, stream, &PoolStats::newSegments, ptr);
    }
    if (grown != HAL_ERROR_OUT_OF_MEMORY) return grown;
    // 5: reclaim and retry once.
    return allocateAfterOutOfMemory(size, rounded, small, stream, ptr);
}

DevicePool::Impl::Candidate DevicePool::Impl::findReusable(size_t size, bool small, Stream* stream,
                                                           Policy rules,
                                                           std::vector<Use>* blocked) {
    auto own = [&]() -> Block* {
        return small ? stream->smallBin.findNewest(size) : stream->largeBin.findSmallest(size);
    };
    // 1 and 2: the stream's own bins hold blocks it may reuse now, including those it freed
    // that waited on other streams until its clock or completions advanced (flow back).
    promote(stream, rules, false);
    if (Block* block = own()) return {block, block->readiness};
    // 2 and 3: blocks of other streams whose free is ordered before this stream or finished.
    if (stats_.bytesPending > 0) promoteAll(rules, false);
    Candidate found = findInOtherStreams(size, small, stream, rules, blocked);
    if (found.block != nullptr || coalesceQueue_.empty()) return found;
    // Merging recent frees may make a block large enough.
    coalesceQueued(rules);
    if (Block* block = own()) return {block, block->readiness};
    return findInOtherStreams(size, small, stream, rules, blocked);
}

DevicePool::Impl::Candidate DevicePool::Impl::findInOtherStreams(size_t size, bool small,
                                                                 Stream* stream, Policy rules,
                                                                 std::vector<Use>* blocked) {
    const VectorClock* orderedAfter = nullptr;
    Candidate best;
    for (const auto& other : streams_) {
        if (other.get() == stream || !other->hasReady()) continue;
        if (rules.proven && orderedAfter == nullptr) orderedAfter = &orderedAfterOf(stream);
        const uint64_t ordered = rules.proven ? orderedAfter->at(other.get()) : 0;
        const uint64_t finished =
            rules.observed ? other->completed.load(std::memory_order_acquire) : 0;
        const uint64_t bound = std::max(ordered, finished);
        Block* block = small ? other->smallBin.findOrdered(size, bound, kOtherStreamTries)
                             : other->largeBin.findOrdered(size, bound, kOtherStreamTries);
        if (block == nullptr) {
            // A block fits but its owner's free is neither ordered before this stream nor seen
            // finished: a pool event on the owner will tell when it is.
            const Block* fitting =
                small ? other->smallBin.findNewest(size) : other->largeBin.findSmallest(size);
            if (fitting != nullptr && blocked != nullptr) {
                blocked->push_back({other.get(), fitting->readyTicket});
            }
            continue;
        }
        if (best.block != nullptr && block->size >= best.block->size) continue;
        best.block = block;
        // Reusing another stream's block needs both what made it reusable by its owner and
        // this stream's relation to the owner's free.
        const ReusePath acrossStreams = block->readyTicket == 0 ? ReusePath::SameStream
                                        : block->readyTicket <= ordered
                                            ? ReusePath::ProvenOrder
                                            : ReusePath::ObservedComplete;
        best.path = std::max(block->readiness, acrossStreams);
    }
    return best;
}

const VectorClock& DevicePool::Impl::orderedAfterOf(Stream* stream) {
    if (scratchStream_ == stream &&
        scratchVersion_ == stream->clockVersion.load(std::memory_order_acquire)) {
        return scratchClock_;
    }
    std::lock_guard<std::mutex> lock(stream->mutex);
    scratchClock_ = stream->orderedAfter;
    scratchStream_ = stream;
    scratchVersion_ = stream->clockVersion.load(std::memory_order_relaxed);
    return scratchClock_;
}

void* DevicePool::Impl::carve(Block* block, size_t rounded, size_t requested, Stream* stream,
                              uint64_t PoolStats::*counter) {
    removeReady(block);
    const size_t remaining = block->size - rounded;
    if (layout::shouldSplit(block->segment->small, remaining)) {
        // The rest inherits everything that makes it safe: owner, ready ticket, readiness.
        Block* rest = arena_.take();
        rest->address = block->address + rounded;
        rest->size = remaining;
        rest->segment = block->segment;
        rest->prev = block;
        rest->next = block->next;
        if (block->next != nullptr) block->next->prev = rest;
        block->next = rest;
        rest->state = BlockState::Ready;
        rest->owner = block->owner;
        rest->readyTicket = block->readyTicket;
        rest->readiness = block->readiness;
        blocks_.emplace(rest->address, rest);
        insertReady(rest);
        block->size = rounded;
    }
    block->state = BlockState::Live;
    block->requested.store(requested, std::memory_order_relaxed);
    if (!block->segment->small || !stream->cache.mayList() || !list(block, stream)) {
        live_.insert(block->address, block);
    }
    block->owner = nullptr;
    block->uses.clear();
    // The allocation is ordered on `stream` only: earlier uses of this memory are ordered
    // before the stream's next operation (or finished), not necessarily before any other
    // stream's. A free on another stream must be ordered after this point.
    const uint64_t allocatedAt = stream->submitted.load(std::memory_order_acquire);
    if (allocatedAt > 0) block->uses.push_back({stream, allocatedAt});
    stats_.bytesInUse += block->size;
    // Every caller gave the parked blocks back under this lock, so bytesInUse is what the
    // program holds (but for blocks other threads park meanwhile). The fast path only takes
    // back what was freed since, so the program's peak is always reached here.
    stats_.peakBytesInUse = std::max(stats_.peakBytesInUse, stats_.bytesInUse);
    stats_.bytesCached -= block->size;
    ++(stats_.*counter);
    return reinterpret_cast<void*>(block->address);
}

Block* DevicePool::Impl::addSegment(void* base, size_t size, bool small, Stream* stream) {
    auto segment = std::make_unique<Segment>();
    segment->base = reinterpret_cast<uintptr_t>(base);
    segment->size = size;
    segment->small = small;
    Block* block = arena_.take();
    block->address = segment->base;
    block->size = size;
    block->segment = segment.get();
    block->prev = block->next = nullptr;
    block->state = BlockState::Ready;
    block->owner = stream;
    block->readyTicket = 0;
    block->readiness = ReusePath::SameStream;
    segment->first = block;
    blocks_.emplace(block->address, block);
    segments_.push_back(std::move(segment));
    insertReady(block);
    ++stats_.backendAllocations;
    stats_.bytesReserved += size;
    stats_.peakBytesReserved = std::max(stats_.peakBytesReserved, stats_.bytesReserved);
    stats_.bytesCached += size;
    updateAddressRange();
    return block;
}

halError DevicePool::Impl::grow(size_t segmentSize, size_t rounded, size_t requested, bool small,
                                Stream* stream, uint64_t PoolStats::*counter, void** ptr) {
    void* base = nullptr;
    const halError result = device_.allocateMemory(segmentSize, &base);
    if (result != HAL_SUCCESS) return result;
    std::vector<Use> lateUses;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        unparkAll(&lateUses);
        Block* block = addSegment(base, segmentSize, small, stream);
        *ptr = carve(block, rounded, requested, stream, counter);
    }
    if (!lateUses.empty()) ensureMarkers(lateUses);
    return HAL_SUCCESS;
}

halError DevicePool::Impl::allocateAfterOutOfMemory(size_t size, size_t rounded, bool small,
                                                    Stream* stream, void** ptr) {
    {
        std::vector<Use> lateUses;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            unparkAll(&lateUses);
        }
        if (!lateUses.empty()) ensureMarkers(lateUses);
    }
    synchronizeEverything();
    std::vector<Released> released;
    std::vector<Use> lateUses;
    bool served = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        // Blocks parked since: given back at their tickets, which completion covers (but for
        // late uses of them, observed by the markers below).
        unparkAll(&lateUses);
        // Everything submitted before is now finished: completion makes any block reusable,
        // whatever the switches say.
        const Policy rules{policy().proven, true};
        promoteAll(rules, true);
        coalesceAll(rules);
        Candidate found = findReusable(rounded, small, stream, rules, nullptr);
        if (found.block != nullptr) {
            *ptr = carve(found.block, rounded, size, stream, &PoolStats::oomSynchronized);
            served = true;
        } else {
            released = detachReleasable(0);
        }
    }
    if (!lateUses.empty()) ensureMarkers(lateUses);
    if (served) return HAL_SUCCESS;
    const halError freed = releaseSegments(released);
    if (freed != HAL_SUCCESS) return freed;
    const halError grown = grow(layout::minimalSegmentSizeFor(rounded), rounded, size, small,
                                stream, &PoolStats::oomSynchronized, ptr);
    if (grown != HAL_ERROR_OUT_OF_MEMORY) return grown;
    std::string message;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        message = outOfMemoryMessage(size);
    }
    device_.setErrorMessage(message.c_str());
    return HAL_ERROR_OUT_OF_MEMORY;
}

std::string DevicePool::Impl::outOfMemoryMessage(size_t size) const {
    size_t largestFree = 0;
    for (const auto& segment : segments_) {
        for (const Block* block = segment->first; block != nullptr; block = block->next) {
            if (block->state != BlockState::Live) largestFree = std::max(largestFree, block->size);
        }
    }
    char message[320];
    std::snprintf(message, sizeof message,
                  "out of memory: requested %zu bytes; in use %" PRIu64 ", reserved %" PRIu64
                  ", pending %" PRIu64
                  ", largest free block %zu bytes (after synchronising "
                  "and releasing cached segments)",
                  size, stats_.bytesInUse, stats_.bytesReserved, stats_.bytesPending, largestFree);
    return message;
}

}  // namespace polyhal::allocator
