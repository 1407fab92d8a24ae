// The state of an event shared between processes, in memory that every process holding the event
// maps (MAP_SHARED): how many records were made, in any process, and which of them has completed.
// A record takes the next generation and publishes it once its stream reaches it; waiters compare
// generations and sleep on a futex that is not private to the process, so that a publication in
// one process wakes waiters in the others. Zero-filled memory is a valid state: never recorded.
// The CPU backend's interprocess events and the vendor doubles' (tests/backends/common) use it.
#ifndef POLYHAL_BACKENDS_PLUGIN_COMMON_SHARED_GENERATIONS_HPP_
#define POLYHAL_BACKENDS_PLUGIN_COMMON_SHARED_GENERATIONS_HPP_

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <type_traits>

namespace polyhal {

class SharedGenerations {
  public:
    // The generations kept at `memory` (shared, zero-filled when new, at least sizeof bytes).
    static SharedGenerations& at(void* memory) { return *static_cast<SharedGenerations*>(memory); }

    // A new record: its generation, to be published once the stream reaches it.
    uint32_t beginRecord() noexcept { return recorded_.fetch_add(1) + 1; }

    // The record `generation` has completed. Generations may complete out of order across
    // streams; the newest one published wins.
    void publish(uint32_t generation) noexcept {
        uint32_t current = completed_.load();
        while (!atOrAfter(current, generation) &&
               !completed_.compare_exchange_weak(current, generation)) {
        }
        syscall(SYS_futex, word(completed_), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
    }

    // The generation of the latest record, 0 if none.
    uint32_t latest() const noexcept { return recorded_.load(); }

    // Has the record `generation` (or a later one) completed?
    bool reached(uint32_t generation) const noexcept {
        return atOrAfter(completed_.load(), generation);
    }

    // Blocks until reached(generation).
    void wait(uint32_t generation) const noexcept {
        for (;;) {
            const uint32_t current = completed_.load();
            if (atOrAfter(current, generation)) return;
            // Returns on a wake, a signal or a change of the word: the loop checks again.
            syscall(SYS_futex, word(completed_), FUTEX_WAIT, current, nullptr, nullptr, 0);
        }
    }

  private:
    // Generations wrap around: `a` is at or after `b` when it is less than half the range ahead.
    static bool atOrAfter(uint32_t a, uint32_t b) noexcept {
        return static_cast<int32_t>(a - b) >= 0;
    }
    static uint32_t* word(const std::atomic<uint32_t>& atomic) noexcept {
        return reinterpret_cast<uint32_t*>(const_cast<std::atomic<uint32_t>*>(&atomic));
    }

    std::atomic<uint32_t> recorded_;
    std::atomic<uint32_t> completed_;
};

static_assert(std::atomic<uint32_t>::is_always_lock_free &&
                  sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
              "shared atomics must be lock-free plain words, usable as futexes");
static_assert(std::is_standard_layout<SharedGenerations>::value, "placed in shared memory as is");

}  // namespace polyhal

#endif  // POLYHAL_BACKENDS_PLUGIN_COMMON_SHARED_GENERATIONS_HPP_
