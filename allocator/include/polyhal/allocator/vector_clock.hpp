// Happens-before bookkeeping shared by the pool and the core's event objects.
//
// Every stream of a pool counts the operations submitted to it (its ticket T). A vector clock
// maps streams to tickets: "every operation of stream t with a ticket <= clock[t]". A stream's
// clock says what is ordered before its next operation; an event carries a snapshot of the
// recording stream's clock; a wait merges that snapshot into the waiting stream's clock.
#ifndef POLYHAL_ALLOCATOR_VECTOR_CLOCK_HPP_
#define POLYHAL_ALLOCATOR_VECTOR_CLOCK_HPP_

#include <cstdint>
#include <vector>

namespace polyhal::allocator {

class Stream;  // a pool's per-stream state; the core holds it as an opaque pointer
class DevicePool;

// A sparse vector clock, tagged with the pool it belongs to so that a snapshot of another
// device's stream never claims ordering in this one. Streams absent from it read as 0.
class VectorClock {
  public:
    struct Entry {
        Stream* stream;
        uint64_t ticket;
    };

    VectorClock() = default;
    explicit VectorClock(const DevicePool* origin) : origin_(origin) {}

    const DevicePool* origin() const { return origin_; }
    const std::vector<Entry>& entries() const { return entries_; }
    bool empty() const { return entries_.empty(); }

    uint64_t at(const Stream* stream) const;
    // clock[stream] = max(clock[stream], ticket).
    void raise(Stream* stream, uint64_t ticket);
    // Elementwise maximum (never assignment: this is what makes chains of waits compose).
    void merge(const VectorClock& other);
    void clear() { entries_.clear(); }

  private:
    const DevicePool* origin_ = nullptr;
    std::vector<Entry> entries_;  // sorted by stream address
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_VECTOR_CLOCK_HPP_
