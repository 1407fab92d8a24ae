// Free blocks of large segments, ordered by (size, readyTicket, address): best fit in
// O(log n), and among equal sizes the block reusable soonest by other streams first.
#ifndef POLYHAL_ALLOCATOR_ORDERED_BIN_HPP_
#define POLYHAL_ALLOCATOR_ORDERED_BIN_HPP_

#include "block.hpp"

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <set>

namespace polyhal::allocator {

class OrderedBin {
  public:
    explicit OrderedBin(std::pmr::memory_resource* nodes) : blocks_(nodes) {}

    bool empty() const { return blocks_.empty(); }
    void insert(Block* block) { blocks_.insert(block); }
    void erase(Block* block) { blocks_.erase(block); }
    // The smallest block that holds `size` bytes.
    Block* findSmallest(size_t size) const;
    // The smallest block of at least `size` bytes with readyTicket <= bound, trying at most
    // `maxSizes` distinct sizes.
    Block* findOrdered(size_t size, uint64_t bound, int maxSizes) const;

  private:
    struct Key {
        size_t size;
        uint64_t ticket;
        uintptr_t address;
    };
    struct Less {
        using is_transparent = void;
        static Key key(const Block* b) { return {b->size, b->readyTicket, b->address}; }
        static Key key(const Key& k) { return k; }
        template <typename A, typename B>
        bool operator()(const A& a, const B& b) const {
            const Key x = key(a), y = key(b);
            if (x.size != y.size) return x.size < y.size;
            if (x.ticket != y.ticket) return x.ticket < y.ticket;
            return x.address < y.address;
        }
    };

    std::pmr::set<Block*, Less> blocks_;
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_ORDERED_BIN_HPP_
