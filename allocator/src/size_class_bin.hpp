// Free blocks of small segments, one exact size class per 512 B (up to a whole 2 MiB segment):
// the smallest fitting class is found with two bitmap scans, so best fit costs O(1).
#ifndef POLYHAL_ALLOCATOR_SIZE_CLASS_BIN_HPP_
#define POLYHAL_ALLOCATOR_SIZE_CLASS_BIN_HPP_

#include "block.hpp"
#include "layout.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace polyhal::allocator {

class SizeClassBin {
  public:
    static constexpr size_t kClasses = layout::kSmallSegment / layout::kGranule;

    bool empty() const { return count_ == 0; }
    // Appends `block` to its class (classes are FIFO: oldest at the head).
    void insert(Block* block);
    void erase(Block* block);
    // The most recently freed block of the smallest class that holds `size` bytes.
    Block* findNewest(size_t size) const;
    // A block of at least `size` bytes with readyTicket <= bound: the oldest block of each
    // class is tried, in increasing size, for at most `maxClasses` classes.
    Block* findOrdered(size_t size, uint64_t bound, int maxClasses) const;

  private:
    static constexpr size_t kWords = kClasses / 64;
    static_assert(kWords <= 64, "one summary word covers every bitmap word");

    static size_t classOf(size_t size) { return size / layout::kGranule - 1; }
    // The first non-empty class >= cls, or kClasses.
    size_t nextNonEmpty(size_t cls) const;

    std::unique_ptr<Block*[]> heads_;  // allocated on first insert
    uint64_t words_[kWords] = {};      // bit c: class c is not empty
    uint64_t summary_ = 0;             // bit w: words_[w] != 0
    size_t count_ = 0;
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_SIZE_CLASS_BIN_HPP_
