// The live blocks by their exact address, for free(): one or two cache lines per lookup however
// many blocks are live, where the address map (every block, ordered, for interior pointers and
// neighbours) walks ~20 nodes at a million blocks.
#ifndef POLYHAL_ALLOCATOR_LIVE_INDEX_HPP_
#define POLYHAL_ALLOCATOR_LIVE_INDEX_HPP_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "block.hpp"
#include "huge_pages.hpp"

namespace polyhal::allocator {

// An open-addressing hash table with linear probing and backward-shift deletion: no allocation
// per insert, no tombstones. Addresses are never 0 (0 marks an empty slot). Not thread-safe: the
// pool's lock guards it.
class LiveIndex {
  public:
    void insert(uintptr_t address, Block* block) {
        if ((count_ + 1) * 2 > slots_.size()) grow();
        size_t at = home(address);
        while (slots_[at].address != 0) at = next(at);
        slots_[at] = {address, block};
        ++count_;
    }

    // The block at exactly `address`, or nullptr.
    Block* find(uintptr_t address) const {
        if (count_ == 0) return nullptr;
        for (size_t at = home(address); slots_[at].address != 0; at = next(at)) {
            if (slots_[at].address == address) return slots_[at].block;
        }
        return nullptr;
    }

    void erase(uintptr_t address) {
        if (count_ == 0) return;
        size_t hole = home(address);
        while (slots_[hole].address != address) {
            if (slots_[hole].address == 0) return;
            hole = next(hole);
        }
        // Moves back every later entry of the run that may sit in the hole: one whose home is
        // not cyclically within (hole, at].
        for (size_t at = next(hole); slots_[at].address != 0; at = next(at)) {
            const size_t wanted = home(slots_[at].address);
            const bool staysBehind =
                hole <= at ? (hole < wanted && wanted <= at) : (hole < wanted || wanted <= at);
            if (staysBehind) continue;
            slots_[hole] = slots_[at];
            hole = at;
        }
        slots_[hole] = {};
        --count_;
    }

    void clear() {
        slots_.clear();
        count_ = 0;
    }

    size_t size() const { return count_; }

  private:
    struct Slot {
        uintptr_t address = 0;
        Block* block = nullptr;
    };

    // Blocks are at least 256-byte aligned: the low bits carry nothing. Fibonacci hashing spreads
    // the rest over the table.
    size_t home(uintptr_t address) const {
        return static_cast<size_t>(((address >> 8) * 0x9E3779B97F4A7C15ull) >> shift_);
    }
    size_t next(size_t at) const { return (at + 1) & (slots_.size() - 1); }

    void grow() {
        const size_t capacity = slots_.empty() ? 64 : slots_.size() * 2;
        Slots bigger(capacity);  // out of memory here leaves the table as it was
        Slots old = std::exchange(slots_, std::move(bigger));
        shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
        count_ = 0;
        for (const Slot& slot : old) {
            if (slot.address != 0) insert(slot.address, slot.block);
        }
    }

    using Slots = std::vector<Slot, HugePageAllocator<Slot>>;
    Slots slots_;  // a power of two in size, at most half full
    size_t count_ = 0;
    unsigned shift_ = 64;
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_LIVE_INDEX_HPP_
