// What a public call reads before its body: one word that counts the reasons every call must
// first take the careful path (apiCall's admitCall): the runtime not initialised yet, each
// capture under way, a trace being written; and one flag of the calling thread, set while it
// runs a host function. While both are 0, a call checks none of them: hal.h's call policies,
// capture modes and tracing cost two loads while nothing uses them.
#ifndef POLYHAL_HAL_SRC_CALL_GATE_HPP_
#define POLYHAL_HAL_SRC_CALL_GATE_HPP_

#include <atomic>
#include <cstdint>

namespace polyhal::call_gate {

namespace detail {
// A cache line of its own: every public call reads it.
struct alignas(64) Reasons {
    std::atomic<uint32_t> count;
};
// Starts at 1: the runtime is not initialised yet.
extern Reasons g_reasons;

// Per thread, so that running a host function writes nothing that other threads read (a cache
// line moving between CPUs on each host function). Initial-exec: read with one load from the
// thread pointer, where libpolyhal's other thread-locals take a call; the few bytes come from
// the static TLS space the C library keeps for libraries loaded later (dlopen).
extern __thread bool t_inHostFunction __attribute__((tls_model("initial-exec")));
}  // namespace detail

// A reason starts to hold. Its own thread sees it at its next call; other threads soon after, as
// they see any relaxed store.
inline void hold() noexcept {
    detail::g_reasons.count.fetch_add(1, std::memory_order_relaxed);
}

// A reason stops holding. Release: a call that reads 0 sees what came before (the runtime that
// initialisation published, in particular). The count only ever changes by read-modify-writes,
// which keep every later value in the release sequence of initialisation's release; a store()
// would break that.
inline void release() noexcept {
    detail::g_reasons.count.fetch_sub(1, std::memory_order_release);
}

// May a public call go straight to its body?
inline bool clear() noexcept {
    const uint32_t reasons = detail::g_reasons.count.load(std::memory_order_acquire);
    return __builtin_expect((reasons | static_cast<uint32_t>(detail::t_inHostFunction)) == 0, 1);
}

}  // namespace polyhal::call_gate

#endif  // POLYHAL_HAL_SRC_CALL_GATE_HPP_
