// The same-stream fast path's state for one stream: the blocks allocated on the stream, and the
// blocks the stream freed that no other stream used, parked for its next allocation of the same
// size. Guarded by its own lock, so allocating and freeing in one stream's order takes no lock
// shared with other streams of the device (docs/pool.md, "The same-stream fast path").
#ifndef POLYHAL_ALLOCATOR_STREAM_CACHE_HPP_
#define POLYHAL_ALLOCATOR_STREAM_CACHE_HPP_

#include "block.hpp"
#include "layout.hpp"
#include "live_index.hpp"
#include "spin_lock.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace polyhal::allocator {

class StreamCache {
  public:
    // The most a stream keeps parked; a free beyond it goes to the pool at once.
    static constexpr size_t kParkedLimit = 4 * layout::kMiB;

    // Guards everything below. Taken after the pool lock, never before it.
    SpinLock lock;
    // Live blocks of small segments allocated on this stream (Block::home is the stream).
    LiveIndex live;
    // Allocations served from parked blocks; added to the pool's same-stream reuse count.
    uint64_t reuses = 0;

    // ---- Whether parking pays: a stream whose allocations keep missing its parked blocks
    // (sizes that vary) stops parking, so that each of its frees does not pay for a park and
    // a later give-back; it tries again every kRetryAfter frees.
    bool parking() const { return parking_.load(std::memory_order_relaxed); }
    // Called on each free before parking: whether to park it. Read and written without the
    // lock (a count lost to a race between threads sharing the stream only delays a retry).
    bool admits() {
        if (parking()) return true;
        const uint32_t declined = declined_.load(std::memory_order_relaxed) + 1;
        if (declined < kRetryAfter) {
            declined_.store(declined, std::memory_order_relaxed);
            return false;
        }
        declined_.store(0, std::memory_order_relaxed);
        parking_.store(true, std::memory_order_relaxed);
        return true;
    }
    // Under the lock: an allocation was served by a parked block, or missed while some were.
    void noteHit() { credit_ = credit_ < kCreditMax ? credit_ + 1 : kCreditMax; }
    void noteMiss() {
        if (--credit_ > 0) return;
        credit_ = 1;  // what a retry starts with
        parking_.store(false, std::memory_order_relaxed);
    }

    bool hasParked() const { return parkedBytes_.load(std::memory_order_relaxed) != 0; }
    size_t parkedBytes() const { return parkedBytes_.load(std::memory_order_relaxed); }
    bool canPark(size_t size) const { return parkedBytes() + size <= kParkedLimit; }

    // Whether a block of exactly `rounded` bytes may be parked: a hint read without the lock.
    bool mayHold(size_t rounded) const {
        if (!layout::isSmall(rounded)) return false;
        const size_t cls = classOf(rounded);
        return (occupied_[cls / 64].load(std::memory_order_relaxed) >> (cls % 64)) & 1;
    }

    // Parks a live small block freed at the stream's operation `ticket`.
    void park(Block* block, uint64_t ticket) {
        if (heads_ == nullptr) heads_ = std::make_unique<Block*[]>(kClasses);
        const size_t cls = classOf(block->size);
        block->parkedAt = ticket;
        block->binNext = heads_[cls];  // bin links are free while a block is live to the pool
        heads_[cls] = block;
        setOccupied(cls, true);
        parkedBytes_.store(parkedBytes() + block->size, std::memory_order_relaxed);
    }

    // The most recently parked block of exactly `rounded` bytes, unparked, or nullptr.
    Block* unpark(size_t rounded) {
        if (heads_ == nullptr || !layout::isSmall(rounded)) return nullptr;
        const size_t cls = classOf(rounded);
        Block* block = heads_[cls];
        if (block == nullptr) return nullptr;
        heads_[cls] = block->binNext;
        if (heads_[cls] == nullptr) setOccupied(cls, false);
        block->binNext = nullptr;
        parkedBytes_.store(parkedBytes() - block->size, std::memory_order_relaxed);
        return block;
    }

    // Unparks every block, calling `release(block)` for each.
    template <typename Release>
    void unparkAll(Release release) {
        if (!hasParked()) return;
        for (uint64_t words = summary_; words != 0; words &= words - 1) {
            const size_t word = static_cast<size_t>(__builtin_ctzll(words));
            const uint64_t occupied = occupied_[word].load(std::memory_order_relaxed);
            for (uint64_t bits = occupied; bits != 0; bits &= bits - 1) {
                const size_t cls = word * 64 + static_cast<size_t>(__builtin_ctzll(bits));
                for (Block* block = heads_[cls]; block != nullptr;) {
                    Block* next = block->binNext;
                    block->binNext = nullptr;
                    release(block);
                    block = next;
                }
                heads_[cls] = nullptr;
            }
            occupied_[word].store(0, std::memory_order_relaxed);
        }
        summary_ = 0;
        parkedBytes_.store(0, std::memory_order_relaxed);
    }

    // Forgets every block (the pool is being reset).
    void clear() {
        live.clear();
        heads_.reset();
        for (auto& word : occupied_) word.store(0, std::memory_order_relaxed);
        summary_ = 0;
        parkedBytes_.store(0, std::memory_order_relaxed);
    }

  private:
    static constexpr size_t kClasses = layout::kSmallLimit / layout::kGranule;
    static size_t classOf(size_t rounded) { return rounded / layout::kGranule - 1; }

    void setOccupied(size_t cls, bool occupied) {
        std::atomic<uint64_t>& word = occupied_[cls / 64];
        const uint64_t bit = uint64_t{1} << (cls % 64);
        const uint64_t bits = word.load(std::memory_order_relaxed);
        const uint64_t updated = occupied ? bits | bit : bits & ~bit;
        word.store(updated, std::memory_order_relaxed);
        const uint64_t summaryBit = uint64_t{1} << (cls / 64);
        summary_ = updated != 0 ? summary_ | summaryBit : summary_ & ~summaryBit;
    }

    static constexpr size_t kWords = kClasses / 64;
    static constexpr int kCreditMax = 8;
    static constexpr uint32_t kRetryAfter = 32;

    std::unique_ptr<Block*[]> heads_;  // per exact size: a list through Block::binNext
    // Bit c: heads_[c] is not empty. Written under `lock`; read without it as a hint.
    std::atomic<uint64_t> occupied_[kWords] = {};
    uint64_t summary_ = 0;  // bit w: occupied_[w] != 0
    int credit_ = kCreditMax;  // hits add one, misses take one; parking stops at zero
    std::atomic<bool> parking_{true};
    std::atomic<uint32_t> declined_{0};
    // Written under `lock`; read without it for statistics and to skip empty caches.
    std::atomic<size_t> parkedBytes_{0};
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_STREAM_CACHE_HPP_
