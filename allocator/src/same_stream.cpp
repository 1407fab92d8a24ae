// The same-stream fast path: a stream takes back, under its own cache lock, the blocks it freed
// that no other stream used. Parked blocks stay live to the rest of the pool until a slow-path
// allocation, a trim or the stream's removal gives them back (docs/pool.md).
#include "device_pool_impl.hpp"

namespace polyhal::allocator {

bool DevicePool::Impl::allocateParked(size_t rounded, size_t requested, Stream* stream,
                                      void** ptr) {
    StreamCache& cache = stream->cache;
    Block* block;
    {
        std::lock_guard<SpinLock> lock(cache.lock);
        block = cache.unpark(rounded);
        if (block == nullptr) return false;
        if (!block->foreignUse.load(std::memory_order_acquire)) {
            block->requested.store(requested, std::memory_order_relaxed);
            block->parked.store(false, std::memory_order_release);
            cache.takenBack(block);
            *ptr = reinterpret_cast<void*>(block->address);
            return true;
        }
    }
    // Another stream used the block after its free: the pool decides when it may be reused.
    std::vector<Use> markers;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        releaseParked(block, stream, &markers);
    }
    if (!markers.empty()) ensureMarkers(markers);
    return false;
}

bool DevicePool::Impl::park(uintptr_t address, Stream* stream) {
    StreamCache& cache = stream->cache;
    std::lock_guard<SpinLock> lock(cache.lock);
    Block* block = cache.live.find(address);
    if (block == nullptr || block->foreignUse.load(std::memory_order_acquire) ||
        !cache.canPark(block->size)) {
        return false;
    }
    block->parked.store(true, std::memory_order_release);
    cache.park(block, stream->submitted.load(std::memory_order_acquire));
    if (cache.announce()) anyParked_.store(true);
    return true;
}

bool DevicePool::Impl::list(Block* block, Stream* stream) {
    std::lock_guard<SpinLock> lock(stream->cache.lock);
    if (!stream->cache.list(block)) return false;
    // What an earlier life of the block may have left (only a listed block's are read).
    block->foreignUse.store(false, std::memory_order_relaxed);
    block->parkedAt = 0;
    block->home = stream;
    return true;
}

void DevicePool::Impl::unparkAnnounced(std::vector<Use>* markers) {
    anyParked_.store(false);
    for (const auto& stream : streams_) {
        if (stream->cache.announced()) unparkStream(stream.get(), markers);
    }
}

void DevicePool::Impl::unparkStream(Stream* stream, std::vector<Use>* markers) {
    StreamCache& cache = stream->cache;
    // Released after the cache lock: releasing takes the stream's clock lock.
    std::vector<Block*>& blocks = unparked_;
    {
        std::lock_guard<SpinLock> lock(cache.lock);
        cache.unparkAll([&](Block* block) { blocks.push_back(block); });
    }
    for (Block* block : blocks) releaseParked(block, stream, markers);
    blocks.clear();
}

void DevicePool::Impl::releaseParked(Block* block, Stream* home, std::vector<Use>* markers) {
    block->home = nullptr;
    block->parked.store(false, std::memory_order_relaxed);
    release(block, home, block->parkedAt, markers);
}

Block* DevicePool::Impl::takeFromCache(uintptr_t address, Stream* freeing) {
    auto take = [address](Stream* home, const Block* expected) -> Block* {
        std::lock_guard<SpinLock> lock(home->cache.lock);
        Block* block = home->cache.live.find(address);
        if (block == nullptr || (expected != nullptr && block != expected)) return nullptr;
        home->cache.unlist(address);
        return block;
    };
    Block* block = freeing->cache.mayHoldListed(address) ? take(freeing, nullptr) : nullptr;
    if (block == nullptr) {
        Block* containing = lookup(address);
        if (containing == nullptr || containing->home == nullptr ||
            containing->address != address) {
            return nullptr;
        }
        block = take(containing->home, containing);
        if (block == nullptr) return nullptr;  // parked by its home meanwhile: freed already
    }
    // A block the home took back from its cache was freed there once: what the home submitted
    // before that free may still touch it.
    if (block->parkedAt != 0) block->addUse(block->home, block->parkedAt);
    block->home = nullptr;
    return block;
}

}  // namespace polyhal::allocator
