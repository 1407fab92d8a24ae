// free() and uses: sealing a block's uses and deciding who may reuse it.
#include "device_pool_impl.hpp"

#include <algorithm>
#include <cstdio>

namespace polyhal::allocator {

namespace {
ReusePath weaker(ReusePath a, ReusePath b) {
    return std::max(a, b);
}

// Live to the program: handed out and not freed (a parked block is live only to the pool).
bool isLive(const Block* block) {
    return block != nullptr && block->state == BlockState::Live &&
           !block->parked.load(std::memory_order_acquire);
}
}  // namespace

Block* DevicePool::Impl::lookup(uintptr_t address) const {
    auto it = blocks_.upper_bound(address);
    if (it == blocks_.begin()) return nullptr;
    Block* block = std::prev(it)->second;
    return block->contains(address) ? block : nullptr;
}

halError DevicePool::Impl::free(void* ptr, Stream* stream) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
    if (stream->cache.mayHoldListed(address) && park(address, stream)) return HAL_SUCCESS;
    std::vector<Use> markers;
    char message[200];
    {
        std::lock_guard<std::mutex> lock(mutex_);
        Block* block = live_.find(address);
        if (block != nullptr) {
            live_.erase(address);
        } else {
            block = takeFromCache(address, stream);
        }
        const Block* containing = block != nullptr ? block : lookup(address);
        if (containing == nullptr) {
            std::snprintf(message, sizeof message,
                          "pointer %p was not allocated by the memory pool of this device", ptr);
        } else if (block == nullptr && containing->state == BlockState::Live &&
                   !containing->parked.load(std::memory_order_acquire)) {
            std::snprintf(message, sizeof message,
                          "pointer %p points inside the allocation at %p (%zu bytes); free takes "
                          "the address the allocation returned",
                          ptr, reinterpret_cast<void*>(containing->address),
                          containing->requested.load(std::memory_order_relaxed));
        } else if (block == nullptr) {
            std::snprintf(message, sizeof message,
                          "pointer %p is not a live allocation of this pool (freed already)", ptr);
        } else {
            // The free is the owner's last use: everything it submitted so far may touch it.
            release(block, stream, stream->submitted.load(std::memory_order_acquire), &markers);
            message[0] = '\0';
        }
    }
    if (message[0] != '\0') {
        device_.setErrorMessage(message);
        return HAL_ERROR_INVALID_VALUE;
    }
    if (!markers.empty()) ensureMarkers(markers);
    return HAL_SUCCESS;
}

void DevicePool::Impl::recordUses(const void* const* ptrs, size_t count, Stream* stream,
                                  uint64_t ticket) {
    const uintptr_t lowest = lowest_.load(std::memory_order_relaxed);
    const uintptr_t highest = highest_.load(std::memory_order_relaxed);
    auto inRange = [&](const void* ptr) {
        const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
        return address >= lowest && address < highest;
    };
    if (std::none_of(ptrs, ptrs + count, inRange)) return;

    std::vector<Use> markers;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (size_t i = 0; i < count; ++i) {
            if (!inRange(ptrs[i])) continue;
            Block* block = lookup(reinterpret_cast<uintptr_t>(ptrs[i]));
            if (block == nullptr) continue;
            switch (block->state) {
            case BlockState::Live:
                block->addUse(stream, ticket);
                // Its home may no longer take it back on its own (nor a parked one be reused).
                if (block->home != nullptr && block->home != stream) {
                    block->foreignUse.store(true, std::memory_order_release);
                }
                break;
            case BlockState::Pending:
                // Still filed under an earlier use; a pool event will observe this one.
                block->addUse(stream, ticket);
                if (stream != block->owner && policy().observed) {
                    markers.push_back({stream, ticket});
                }
                break;
            case BlockState::Ready: lateUse(block, stream, ticket, &markers); break;
            }
        }
    }
    if (!markers.empty()) ensureMarkers(markers);
}

// A use captured after the block was freed (another thread's free won the race, or the
// program used memory after freeing it): the block is filed again with the new use, so no
// stream receives it before that use is ordered or finished.
void DevicePool::Impl::lateUse(Block* block, Stream* stream, uint64_t ticket,
                               std::vector<Use>* markers) {
    const ReusePath before = block->readiness;
    removeReady(block);
    block->uses.clear();
    block->uses.push_back({block->owner, block->readyTicket});
    block->addUse(stream, ticket);
    classify(block, policy(), markers);
    if (block->state == BlockState::Ready) block->readiness = weaker(block->readiness, before);
}

bool DevicePool::Impl::find(const void* ptr, Allocation* allocation) const {
    // Outside every segment (a host pointer, another device's): no lock. A segment's bounds are
    // published before any block of it is handed out.
    const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
    if (address < lowest_.load(std::memory_order_acquire) ||
        address >= highest_.load(std::memory_order_acquire)) {
        return false;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    const Block* block = lookup(address);
    if (!isLive(block)) return false;
    allocation->base = reinterpret_cast<void*>(block->address);
    allocation->size = block->requested.load(std::memory_order_relaxed);
    return true;
}

bool DevicePool::Impl::exportBlock(const void* ptr, ExportedBlock* exported) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto address = reinterpret_cast<uintptr_t>(ptr);
    const Block* block = lookup(address);
    if (!isLive(block) || block->address != address) return false;
    const Segment* segment = block->segment;
    exported->segmentBase = reinterpret_cast<void*>(segment->base);
    exported->segmentSize = segment->size;
    exported->offset = block->address - segment->base;
    exported->size = block->requested.load(std::memory_order_relaxed);
    return true;
}

DevicePool::Impl::Verdict DevicePool::Impl::evaluate(const Block* block,
                                                     const VectorClock& ownerClock,
                                                     Policy rules) const {
    Verdict verdict;
    for (const Use& use : block->uses) {
        if (use.stream == block->owner) continue;  // the owner's own order protects it
        verdict.anyForeign = true;
        if (rules.proven && use.ticket <= ownerClock.at(use.stream)) {
            verdict.anyProven = true;
        } else if (rules.observed && use.stream->isComplete(use.ticket)) {
            verdict.anyObserved = true;
        } else if (verdict.unsatisfied.stream == nullptr) {
            verdict.unsatisfied = use;
        }
    }
    return verdict;
}

void DevicePool::Impl::classify(Block* block, Policy rules, std::vector<Use>* markers) {
    Stream* owner = block->owner;
    const bool foreign = std::any_of(block->uses.begin(), block->uses.end(),
                                     [&](const Use& use) { return use.stream != owner; });
    if (!foreign) {
        settle(block, Verdict{}, 0);
        return;
    }
    Verdict verdict;
    uint64_t ownerTicket;
    {
        std::lock_guard<std::mutex> lock(owner->mutex);
        verdict = evaluate(block, owner->orderedAfter, rules);
        ownerTicket = owner->submitted.load(std::memory_order_acquire);
    }
    if (verdict.unsatisfied.stream != nullptr && rules.observed) {
        for (const Use& use : block->uses) {
            if (use.stream != owner && !use.stream->isComplete(use.ticket)) {
                markers->push_back(use);
            }
        }
    }
    settle(block, verdict, ownerTicket);
}

void DevicePool::Impl::settle(Block* block, const Verdict& verdict, uint64_t ownerTicket) {
    Stream* owner = block->owner;
    if (verdict.unsatisfied.stream != nullptr) {
        block->state = BlockState::Pending;
        owner->pending[verdict.unsatisfied.stream].emplace(verdict.unsatisfied.ticket, block);
        stats_.bytesPending += block->size;
        return;
    }
    uint64_t ownFree = 0;
    for (const Use& use : block->uses) {
        if (use.stream == owner) ownFree = use.ticket;
    }
    block->state = BlockState::Ready;
    // A use proven ordered is ordered before the owner's current ticket (clock changes take a
    // ticket), not necessarily before its free: other streams must then follow the later one.
    block->readyTicket = verdict.anyProven ? ownerTicket : ownFree;
    block->readiness = verdict.anyObserved ? ReusePath::ObservedComplete
                       : verdict.anyProven ? ReusePath::ProvenOrder
                                           : ReusePath::SameStream;
    block->uses.clear();
    insertReady(block);
    if (!block->awaitingCoalesce) {
        block->awaitingCoalesce = true;
        coalesceQueue_.push_back(block);
    }
}

void DevicePool::Impl::promote(Stream* owner, Policy rules, bool always) {
    if (owner->pending.empty()) return;
    const uint64_t epoch = completionEpoch_.load(std::memory_order_acquire);
    VectorClock clock;
    uint64_t ownerTicket;
    {
        std::lock_guard<std::mutex> lock(owner->mutex);
        const uint64_t version = owner->clockVersion.load(std::memory_order_relaxed);
        if (!always && owner->checkedClockVersion == version &&
            owner->checkedCompletionEpoch == epoch) {
            return;
        }
        owner->checkedClockVersion = version;
        owner->checkedCompletionEpoch = epoch;
        clock = owner->orderedAfter;
        ownerTicket = owner->submitted.load(std::memory_order_acquire);
    }
    for (auto it = owner->pending.begin(); it != owner->pending.end();) {
        Stream* waitedOn = it->first;
        auto& waits = it->second;
        const uint64_t ordered = rules.proven ? clock.at(waitedOn) : 0;
        const uint64_t finished =
            rules.observed ? waitedOn->completed.load(std::memory_order_acquire) : 0;
        const uint64_t bound = std::max(ordered, finished);
        while (!waits.empty() && waits.begin()->first <= bound) {
            Block* block = waits.begin()->second;
            waits.erase(waits.begin());
            stats_.bytesPending -= block->size;
            // Either Ready now or filed under its next unsatisfied use (a later ticket).
            settle(block, evaluate(block, clock, rules), ownerTicket);
        }
        it = waits.empty() ? owner->pending.erase(it) : std::next(it);
    }
}

void DevicePool::Impl::promoteAll(Policy rules, bool always) {
    for (const auto& stream : streams_) promote(stream.get(), rules, always);
}

void DevicePool::Impl::insertReady(Block* block) {
    if (block->segment->small) {
        block->owner->smallBin.insert(block);
    } else {
        block->owner->largeBin.insert(block);
    }
}

void DevicePool::Impl::removeReady(Block* block) {
    if (block->segment->small) {
        block->owner->smallBin.erase(block);
    } else {
        block->owner->largeBin.erase(block);
    }
}

}  // namespace polyhal::allocator
