// Merging adjacent free blocks. Frees are merged lazily, when an allocation would otherwise
// miss (and before trimming), so a free followed by an allocation of the same size reuses the
// block without splitting and merging it every time.
#include "device_pool_impl.hpp"

#include <algorithm>

namespace polyhal::allocator {

namespace {

// How the owner of a merged block may treat a finished neighbour it absorbed.
ReusePath absorbedPath(const Block* block) {
    const bool untouched = block->readyTicket == 0 && block->readiness == ReusePath::SameStream;
    return untouched ? ReusePath::SameStream : ReusePath::ObservedComplete;
}

}  // namespace

bool DevicePool::Impl::isComplete(const Block* block) {
    return block->owner->isComplete(block->readyTicket);
}

bool DevicePool::Impl::reusableByAnyone(const Block* block, Policy rules) {
    const bool untouched = block->readyTicket == 0 && block->readiness == ReusePath::SameStream;
    return untouched || (rules.observed && isComplete(block));
}

// Two Ready neighbours merge when the result is no less reusable: same owner, or one of them
// reusable by anyone (untouched, or finished when completion may be used). A Pending block
// never merges until it is Ready.
bool DevicePool::Impl::mergeable(const Block* low, const Block* high, Policy rules) const {
    if (low->state != BlockState::Ready || high->state != BlockState::Ready) return false;
    return low->owner == high->owner || reusableByAnyone(low, rules) ||
           reusableByAnyone(high, rules);
}

// The merged block takes the union of both blocks' uses: the later ready ticket of one owner,
// or the owner of the unfinished side.
Block* DevicePool::Impl::merge(Block* low, Block* high, Policy rules) {
    removeReady(low);
    removeReady(high);
    if (low->owner == high->owner) {
        low->readyTicket = std::max(low->readyTicket, high->readyTicket);
        low->readiness = std::max(low->readiness, high->readiness);
    } else if (reusableByAnyone(high, rules)) {
        low->readiness = std::max(low->readiness, absorbedPath(high));
    } else {
        const ReusePath absorbed = absorbedPath(low);
        low->owner = high->owner;
        low->readyTicket = high->readyTicket;
        low->readiness = std::max(high->readiness, absorbed);
    }
    low->size += high->size;
    low->next = high->next;
    if (high->next != nullptr) high->next->prev = low;
    blocks_.erase(high->address);
    arena_.give(high);
    insertReady(low);
    return low;
}

Block* DevicePool::Impl::mergeNeighbours(Block* block, Policy rules) {
    while (block->prev != nullptr && mergeable(block->prev, block, rules)) {
        block = merge(block->prev, block, rules);
    }
    while (block->next != nullptr && mergeable(block, block->next, rules)) {
        block = merge(block, block->next, rules);
    }
    return block;
}

void DevicePool::Impl::coalesceQueued(Policy rules) {
    for (Block* block : coalesceQueue_) {
        block->awaitingCoalesce = false;
        if (block->state == BlockState::Ready) mergeNeighbours(block, rules);
    }
    coalesceQueue_.clear();
}

void DevicePool::Impl::coalesceAll(Policy rules) {
    for (const auto& segment : segments_) {
        for (Block* block = segment->first; block != nullptr; block = block->next) {
            if (block->state != BlockState::Ready) continue;
            while (block->next != nullptr && mergeable(block, block->next, rules)) {
                block = merge(block, block->next, rules);
            }
        }
    }
}

}  // namespace polyhal::allocator
