// Spin-then-sleep waiting on a condition, and waking the waiters once it may have changed.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_NOTIFIER_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_NOTIFIER_HPP_

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include "engine/futex.hpp"

namespace polyhal::cpu {

enum class WaitPolicy {
    kSpinThenSleep,  // poll briefly first: the lowest latency when the wait is short
    kSleep,          // go straight to the futex (HAL_EVENT_BLOCKING_SYNC)
};

// Whether kSpinThenSleep waits poll before sleeping: not on a single-CPU machine, where the
// thread being waited for cannot run meanwhile anyway.
bool spinningHelps();

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Waiting for a condition kept in other atomics (a completion counter, a queue length): await()
// polls briefly (kSpinThenSleep), then sleeps on a futex until notifyAll().
//
// Protocol: the side that changes the state does so with a seq_cst store or read-modify-write
// and then calls notifyAll(); ready() reads the state with seq_cst loads. A sleeper announces
// itself in `sleepers_` (seq_cst) before its last look at the state, so either it sees the new
// state or the notifier sees it and bumps `epoch_`, which makes its futexWait return at once.
// notifyAll() costs one load when nobody sleeps.
class Notifier {
  public:
    template <class Ready>
    void await(const Ready& ready, WaitPolicy policy) {
        if (policy == WaitPolicy::kSpinThenSleep && spinBeforeSleeping(ready)) return;
        while (!ready()) {
            sleepers_.fetch_add(1, std::memory_order_seq_cst);
            const uint32_t seen = epoch_.load(std::memory_order_seq_cst);
            if (!ready()) futexWait(epoch_, seen);
            sleepers_.fetch_sub(1, std::memory_order_seq_cst);
        }
    }

    void notifyAll() {
        if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
        epoch_.fetch_add(1, std::memory_order_seq_cst);
        futexWakeAll(epoch_);
    }

  private:
    // Polls ready() for a short while; true if it became true. A few pause-polls catch a peer
    // running on another CPU at once; then sched_yield() polls, which also let the peer run if
    // it shares this CPU (the kernel often wakes a thread on its waker's CPU), for about
    // kSpinWindow.
    template <class Ready>
    static bool spinBeforeSleeping(const Ready& ready) {
        if (!spinningHelps()) return false;
        for (unsigned i = 0; i < kPausePolls; ++i) {
            if (ready()) return true;
            cpuRelax();
        }
        const auto deadline = std::chrono::steady_clock::now() + kSpinWindow;
        do {
            if (ready()) return true;
            sched_yield();
        } while (std::chrono::steady_clock::now() < deadline);
        return ready();
    }

    static constexpr unsigned kPausePolls = 64;
    static constexpr std::chrono::microseconds kSpinWindow{50};

    std::atomic<uint32_t> epoch_{0};
    std::atomic<uint32_t> sleepers_{0};
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_NOTIFIER_HPP_
