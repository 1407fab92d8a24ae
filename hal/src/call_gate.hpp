// The one word a public call reads before its body. It counts the reasons a call must first take
// the careful path (apiCall's admitCall): the runtime not initialised yet, each host function
// running on any thread, each capture under way, a trace being written. While it is 0, a call
// checks none of them: hal.h's call policies, capture modes and tracing cost one load while
// nothing uses them.
#ifndef POLYHAL_HAL_SRC_CALL_GATE_HPP_
#define POLYHAL_HAL_SRC_CALL_GATE_HPP_

#include <atomic>
#include <cstdint>

namespace polyhal::call_gate {

namespace detail {
// Starts at 1: the runtime is not initialised yet.
extern std::atomic<uint32_t> g_reasons;
}  // namespace detail

// A reason starts to hold. Its own thread sees it at its next call; other threads soon after, as
// they see any relaxed store.
inline void hold() noexcept {
    detail::g_reasons.fetch_add(1, std::memory_order_relaxed);
}

// A reason stops holding. Release: a call that reads 0 sees what came before (the runtime that
// initialisation published, in particular).
inline void release() noexcept {
    detail::g_reasons.fetch_sub(1, std::memory_order_release);
}

// May a public call go straight to its body?
inline bool clear() noexcept {
    return __builtin_expect(detail::g_reasons.load(std::memory_order_acquire) == 0, 1);
}

}  // namespace polyhal::call_gate

#endif  // POLYHAL_HAL_SRC_CALL_GATE_HPP_
