// A lock for critical sections of a few dozen instructions: acquiring costs one atomic exchange
// and releasing a plain store, where a mutex pays an atomic operation for each. A waiter spins
// briefly, then yields its CPU so that a preempted holder can finish.
#ifndef POLYHAL_ALLOCATOR_SPIN_LOCK_HPP_
#define POLYHAL_ALLOCATOR_SPIN_LOCK_HPP_

#include <atomic>
#include <thread>

namespace polyhal::allocator {

class SpinLock {
  public:
    void lock() {
        while (held_.exchange(true, std::memory_order_acquire)) {
            for (int spins = 0; held_.load(std::memory_order_relaxed); ++spins) {
                if (spins < kSpinsBeforeYield) {
                    pause();
                } else {
                    std::this_thread::yield();
                }
            }
        }
    }
    void unlock() { held_.store(false, std::memory_order_release); }

  private:
    static constexpr int kSpinsBeforeYield = 64;

    static void pause() {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        asm volatile("yield");
#endif
    }

    std::atomic<bool> held_{false};
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_SPIN_LOCK_HPP_
