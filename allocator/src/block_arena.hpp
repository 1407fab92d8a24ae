// Block records, recycled: splitting and merging never reach the system allocator once warm.
#ifndef POLYHAL_ALLOCATOR_BLOCK_ARENA_HPP_
#define POLYHAL_ALLOCATOR_BLOCK_ARENA_HPP_

#include "block.hpp"

#include <memory>
#include <vector>

namespace polyhal::allocator {

class BlockArena {
  public:
    Block* take() {
        if (spare_.empty()) {
            chunks_.push_back(std::make_unique<Block[]>(kChunk));
            for (size_t i = 0; i < kChunk; ++i) spare_.push_back(&chunks_.back()[i]);
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
    static constexpr size_t kChunk = 1024;
    std::vector<std::unique_ptr<Block[]>> chunks_;
    std::vector<Block*> spare_;
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_BLOCK_ARENA_HPP_
