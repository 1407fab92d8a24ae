// Blocks and segments: the pool's record of every piece of device memory it manages.
#ifndef POLYHAL_ALLOCATOR_BLOCK_HPP_
#define POLYHAL_ALLOCATOR_BLOCK_HPP_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace polyhal::allocator {

class Stream;

// Operation `ticket` of `stream` uses the block.
struct Use {
    Stream* stream;
    uint64_t ticket;
};

enum class BlockState : uint8_t {
    Live,     // handed out
    Ready,    // free, in its owner's bins: the owner may reuse it now
    Pending,  // free, waiting until a use on another stream is ordered or observed finished
};

// Why a free block may serve an allocation; one statistics counter each.
enum class ReusePath : uint8_t { SameStream, ProvenOrder, ObservedComplete };

struct Segment;

// 128 bytes, aligned to a cache line: a record is two lines, the first with its address, size
// and links, the second with its state, owner and uses, never three.
struct alignas(64) Block {
    uintptr_t address = 0;
    size_t size = 0;
    // Live: bytes the caller asked for. Atomic because the same-stream fast path sets it under
    // the stream's cache lock while lookups read it under the pool's.
    std::atomic<size_t> requested{0};

    Segment* segment = nullptr;
    Block* prev = nullptr;  // address-order neighbours within the segment
    Block* next = nullptr;
    Block* binPrev = nullptr;  // links of a SizeClassBin list (circular)
    Block* binNext = nullptr;

    BlockState state = BlockState::Ready;
    bool awaitingCoalesce = false;  // listed in the pool's coalescing queue
    // Ready: what justifies the owner's own reuse.
    ReusePath readiness = ReusePath::SameStream;
    // The same-stream fast path's flags (with `home` below), beside the other small fields so
    // that a record stays within two lines. Live to the pool but freed by the program: parked in
    // its home's cache.
    std::atomic<bool> parked{false};
    // Another stream used the block while it was home to a stream: only the pool may free it.
    std::atomic<bool> foreignUse{false};
    // Ready and Pending: the stream the block was freed on, whose bins hold it once Ready.
    Stream* owner = nullptr;
    // Ready: every use is ordered before operation `readyTicket` of the owner or has finished,
    // so a stream ordered after that operation (or the host having seen it finish) may reuse
    // the block. 0 for memory nothing has used.
    uint64_t readyTicket = 0;
    // Live: uses seen so far, at most one entry per stream (the highest ticket). Pending: the
    // sealed set, the owner's free point included. Ready: unused (readyTicket summarises it).
    std::vector<Use> uses;

    // ---- The same-stream fast path (stream_cache.hpp). A block of a small segment allocated on
    // a stream is `home` to it: listed in that stream's cache, which may take it back when the
    // stream frees it. `home` changes only under both the pool lock and the home's cache lock.
    Stream* home = nullptr;
    uint64_t parkedAt = 0;  // parked: the home's ticket at the free (guarded by its cache lock)

    uintptr_t end() const { return address + size; }
    bool contains(uintptr_t p) const { return p >= address && p < end(); }
    void addUse(Stream* stream, uint64_t ticket) {
        for (Use& use : uses) {
            if (use.stream == stream) {
                if (ticket > use.ticket) use.ticket = ticket;
                return;
            }
        }
        uses.push_back({stream, ticket});
    }
};

// One allocation obtained from the backend, cut into address-ordered blocks.
struct Segment {
    uintptr_t base = 0;
    size_t size = 0;
    bool small = false;
    Block* first = nullptr;

    bool wholeBlock() const { return first != nullptr && first->next == nullptr; }
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_BLOCK_HPP_
