// What an event's latest record captured, in the pool's happens-before terms. The core keeps one
// in each event object.
//
// The clock is taken before each backend call and applied after it succeeds, so polyhal never
// claims more ordering than the device gave. Queries, synchronisations and waits apply the clock
// in place instead of copying it (they run often), and only if no newer record replaced it in
// the meantime: then they claim nothing, which is always safe. A record whose completion the
// pool has already been told about is not applied again.
#ifndef POLYHAL_ALLOCATOR_EVENT_CLOCK_H_
#define POLYHAL_ALLOCATOR_EVENT_CLOCK_H_

#include <polyhal/allocator/vector_clock.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>

namespace polyhal::allocator {

class EventClock {
  public:
    // Identifies the latest record; read it before the backend call.
    uint64_t generation() const { return published_.load(std::memory_order_acquire); }

    // A backend record succeeded: `captured` is the stream's clock taken before it. It is swapped
    // in, so `captured` comes back holding the previous clock's storage for reuse.
    void assign(VectorClock& captured) {
        std::lock_guard<std::mutex> lock(mutex_);
        std::swap(clock_, captured);
        published_.store(published_.load(std::memory_order_relaxed) + 1,
                         std::memory_order_release);
    }

    // Calls fn(clock) if record `generation` is still the latest.
    template <typename Fn>
    void applyIfCurrent(uint64_t generation, Fn&& fn) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (published_.load(std::memory_order_relaxed) == generation) fn(clock_);
    }

    // Calls fn(clock) once per record: after a query or synchronisation found record
    // `generation` complete. Cheap when the pool already knows.
    template <typename Fn>
    void completeOnce(uint64_t generation, Fn&& fn) {
        if (generation == 0 || observed_.load(std::memory_order_acquire) == generation) return;
        std::lock_guard<std::mutex> lock(mutex_);
        if (published_.load(std::memory_order_relaxed) != generation) return;
        fn(clock_);
        observed_.store(generation, std::memory_order_release);
    }

  private:
    std::mutex mutex_;
    VectorClock clock_;
    std::atomic<uint64_t> published_{0};  // generation of the latest record (0: never recorded)
    std::atomic<uint64_t> observed_{0};   // latest generation the pool saw complete
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_EVENT_CLOCK_H_
