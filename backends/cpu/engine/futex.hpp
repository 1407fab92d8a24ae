// Raw futex system calls: the sleeping half of the backend's spin-then-sleep waits.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_FUTEX_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_FUTEX_HPP_

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

namespace polyhal::cpu {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "a futex word must be a plain 32-bit integer");

// Sleeps while `word` holds `expected`. Also returns on a signal or spuriously, so callers
// re-check their condition in a loop.
inline void futexWait(std::atomic<uint32_t>& word, uint32_t expected) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
            nullptr, 0);
}

// Wakes every thread sleeping on `word`.
inline void futexWakeAll(std::atomic<uint32_t>& word) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
            nullptr, 0);
}

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_FUTEX_HPP_
