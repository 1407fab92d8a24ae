// The same-stream fast path's state for one stream: blocks allocated on the stream that it may
// take back (listed), and those among them it freed while no other stream used them (parked),
// kept by exact size for its next allocation. Guarded by its own lock, so allocating and freeing
// in one stream's order takes no lock shared with other streams of the device (docs/pool.md,
// "The same-stream fast path").
#ifndef POLYHAL_ALLOCATOR_STREAM_CACHE_HPP_
#define POLYHAL_ALLOCATOR_STREAM_CACHE_HPP_

#include "block.hpp"
#include "layout.hpp"
#include "live_index.hpp"
#include "spin_lock.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace polyhal::allocator {

class StreamCache {
  public:
    // The most a stream keeps parked; a free beyond it goes to the pool at once.
    static constexpr size_t kParkedLimit = 4 * layout::kMiB;

    // Guards everything below but the hints. Taken after the pool lock, never before it.
    SpinLock lock;
    // Listed blocks that are live (Block::home is the stream).
    LiveIndex live;
    // Allocations served from parked blocks; added to the pool's same-stream reuse count.
    uint64_t reuses = 0;

    // ---- Whether the cache pays. Each parked block the stream takes back earns a credit; each
    // one given back to the pool unused (the stream's allocations wanted other sizes, or
    // another stream's allocation took it) costs one. The cache holds at most `credit` blocks,
    // listed or parked: at zero a stream lists nothing, so that its frees go straight to the
    // pool rather than pay for a park and a give-back, and it tries again with one credit
    // after kRetryAfter allocations. (Listed blocks that live long hold their share of the
    // credit until freed: counting only parked ones listed every block of a random workload.)

    // Before taking the lock to list a block a slow-path allocation carved; without the lock
    // (a count lost to a race between threads sharing the stream only delays a retry).
    bool mayList() {
        if (listing_.load(std::memory_order_relaxed)) return true;
        const uint32_t declined = declined_.load(std::memory_order_relaxed) + 1;
        if (declined < kRetryAfter) {
            declined_.store(declined, std::memory_order_relaxed);
            return false;
        }
        declined_.store(0, std::memory_order_relaxed);
        return true;
    }
    // Under the lock: lists `block` if the credit allows (a stream at zero gets one back).
    bool list(Block* block) {
        if (credit_ == 0) credit_ = 1;
        const bool listed = live.size() + parkedCount_ < static_cast<size_t>(credit_);
        if (listed) insertLive(block);
        refreshHints();
        return listed;
    }
    // Under the lock: a listed block leaves the cache, freed through the pool.
    void unlist(uintptr_t address) {
        eraseLive(address);
        refreshHints();
    }
    // Before taking the lock to park a freed block: whether the block may be listed. Never
    // false for a listed block but where two listed blocks share a hint slot; such a block is
    // then freed through the pool, which finds it here under the lock.
    bool mayHoldListed(uintptr_t address) const {
        return hintSlot(address).load(std::memory_order_relaxed) == address;
    }
    // Whether a block of exactly `rounded` bytes may be parked, before taking the lock.
    bool mayHoldParked(size_t rounded) const {
        if (!hasParked() || !layout::isSmall(rounded)) return false;
        const size_t cls = classOf(rounded);
        return (occupied_[cls / 64].load(std::memory_order_relaxed) >> (cls % 64)) & 1;
    }

    bool hasParked() const { return parkedBytes_.load(std::memory_order_relaxed) != 0; }
    size_t parkedBytes() const { return parkedBytes_.load(std::memory_order_relaxed); }

    // Under the lock: whether the byte limit lets `size` more bytes park (allocating the
    // parked lists on first use, so that park() cannot fail).
    bool canPark(size_t size) {
        if (parkedBytes() + size > kParkedLimit) return false;
        if (heads_ == nullptr) heads_ = std::make_unique<Block*[]>(kClasses);
        return true;
    }
    // Under the lock, after canPark(): parks the listed `block`, freed at the stream's
    // operation `ticket`.
    void park(Block* block, uint64_t ticket) {
        eraseLive(block->address);
        const size_t cls = classOf(block->size);
        block->parkedAt = ticket;
        block->binNext = heads_[cls];  // bin links are free while a block is live to the pool
        heads_[cls] = block;
        setOccupied(cls, true);
        ++parkedCount_;
        parkedBytes_.store(parkedBytes() + block->size, std::memory_order_relaxed);
        refreshHints();
    }

    // Under the lock: the most recently parked block of exactly `rounded` bytes, taken out of
    // the parked lists (still to be listed again or given back), or nullptr.
    Block* unpark(size_t rounded) {
        if (heads_ == nullptr || !layout::isSmall(rounded)) return nullptr;
        const size_t cls = classOf(rounded);
        Block* block = heads_[cls];
        if (block == nullptr) return nullptr;
        heads_[cls] = block->binNext;
        if (heads_[cls] == nullptr) setOccupied(cls, false);
        block->binNext = nullptr;
        --parkedCount_;
        parkedBytes_.store(parkedBytes() - block->size, std::memory_order_relaxed);
        return block;
    }
    // Under the lock: the stream took `block` back from unpark().
    void takenBack(Block* block) {
        insertLive(block);
        if (credit_ < kCreditMax) ++credit_;
        ++reuses;
        refreshHints();
    }

    // ---- Whether the pool must look here for parked blocks. The first park since the pool last
    // looked announces the stream: it sets `announced` and then the pool's flag, both seq_cst;
    // the pool clears its flag (seq_cst) before it reads `announced` of each stream. So a
    // parked block is always in an announced stream while the flag is set, or in one the pool
    // is about to look at, and a pool that finds the flag clear skips every stream.

    // Under the lock, after park(): whether this park must raise the pool's flag.
    bool announce() {
        if (announced_.load(std::memory_order_relaxed)) return false;
        announced_.store(true);
        return true;
    }
    // Without the lock, while the pool clears its flag.
    bool announced() const { return announced_.load(); }

    // Under the lock: unparks every block, calling `release(block)` for each, all given back
    // unused; the stream is no longer announced.
    template <typename Release>
    void unparkAll(Release release) {
        announced_.store(false, std::memory_order_relaxed);
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
        credit_ = std::max(0, credit_ - static_cast<int>(std::min<size_t>(parkedCount_, kCreditMax)));
        parkedCount_ = 0;
        parkedBytes_.store(0, std::memory_order_relaxed);
        refreshHints();
    }

    // Under the lock: forgets every block (the pool is being reset).
    void clear() {
        live.clear();
        announced_.store(false, std::memory_order_relaxed);
        for (auto& slot : hints_) slot.store(0, std::memory_order_relaxed);
        heads_.reset();
        for (auto& word : occupied_) word.store(0, std::memory_order_relaxed);
        summary_ = 0;
        parkedCount_ = 0;
        parkedBytes_.store(0, std::memory_order_relaxed);
        refreshHints();
    }

  private:
    static constexpr size_t kClasses = layout::kSmallLimit / layout::kGranule;
    static constexpr size_t kWords = kClasses / 64;
    static constexpr int kCreditStart = 64;
    static constexpr int kCreditMax = 1024;
    static constexpr uint32_t kRetryAfter = 32;
    static constexpr unsigned kHintBits = 8;

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
    void refreshHints() {
        listing_.store(live.size() + parkedCount_ < static_cast<size_t>(credit_),
                       std::memory_order_relaxed);
    }
    std::atomic<uintptr_t>& hintSlot(uintptr_t address) {
        return hints_[((address >> 9) * 0x9E3779B97F4A7C15ull) >> (64 - kHintBits)];
    }
    const std::atomic<uintptr_t>& hintSlot(uintptr_t address) const {
        return hints_[((address >> 9) * 0x9E3779B97F4A7C15ull) >> (64 - kHintBits)];
    }
    void insertLive(Block* block) {
        live.insert(block->address, block);
        hintSlot(block->address).store(block->address, std::memory_order_relaxed);
    }
    void eraseLive(uintptr_t address) {
        live.erase(address);
        std::atomic<uintptr_t>& slot = hintSlot(address);
        if (slot.load(std::memory_order_relaxed) == address) {
            slot.store(0, std::memory_order_relaxed);
        }
    }

    std::unique_ptr<Block*[]> heads_;  // per exact size: a list through Block::binNext
    // Bit c: heads_[c] is not empty. Written under `lock`; read without it as a hint.
    std::atomic<uint64_t> occupied_[kWords] = {};
    uint64_t summary_ = 0;  // bit w: occupied_[w] != 0
    size_t parkedCount_ = 0;
    int credit_ = kCreditStart;
    // Hints for the paths that may skip the lock, written under it.
    std::atomic<size_t> parkedBytes_{0};
    std::atomic<bool> listing_{true};
    std::atomic<bool> announced_{false};
    // The address of a listed block, by a hash of it: lets a free of an unlisted block skip
    // the lock. Written under it.
    std::atomic<uintptr_t> hints_[size_t{1} << kHintBits] = {};
    std::atomic<uint32_t> declined_{0};
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_STREAM_CACHE_HPP_
