// Block records, recycled: splitting and merging never reach the system allocator once warm.
#ifndef POLYHAL_ALLOCATOR_BLOCK_ARENA_HPP_
#define POLYHAL_ALLOCATOR_BLOCK_ARENA_HPP_

#include "block.hpp"
#include "huge_pages.hpp"

#include <vector>

namespace polyhal::allocator {

class BlockArena {
  public:
    Block* take() {
        if (spare_.empty()) {
            // Each chunk twice the last, up to one huge page of records: a small pool stays
            // small, a large one has its records in few pages.
            size_t records = kFirstChunk;
            for (size_t i = 0; i < chunks_.size() && records < kLargestChunk; ++i) records *= 2;
            Chunk& chunk = chunks_.emplace_back(records);
            for (Block& block : chunk) spare_.push_back(&block);
        }
        Block* block = spare_.back();
        spare_.pop_back();
        return block;
    }

    // The record may still be listed in the coalescing queue (awaitingCoalesce is kept so the
    // flag keeps meaning "listed"); a recycled record reads as Live, which the queue skips.
    void give(Block* block) {
        block->state = BlockState::Live;
        block->segment = nullptr;
        block->prev = block->next = nullptr;
        block->owner = nullptr;
        block->uses.clear();
        block->home = nullptr;
        block->parked.store(false, std::memory_order_relaxed);
        block->foreignUse.store(false, std::memory_order_relaxed);
        spare_.push_back(block);
    }

  private:
    using Chunk = std::vector<Block, HugePageAllocator<Block>>;  // never resized: records stay put
    static constexpr size_t kFirstChunk = 1024;
    static constexpr size_t kLargestChunk = huge_pages::kSize / sizeof(Block);
    static_assert(huge_pages::kSize % sizeof(Block) == 0, "the largest chunk fills its pages");
    std::vector<Chunk> chunks_;
    std::vector<Block*> spare_;
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_BLOCK_ARENA_HPP_
