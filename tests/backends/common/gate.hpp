// Holds a stream in a host function until the test opens the gate (or 10 s pass), so that what
// is enqueued behind it is still pending while the test looks.
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_GATE_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_GATE_HPP_

#include <atomic>
#include <chrono>
#include <thread>

namespace polyhal::doubles {

struct Gate {
    std::atomic<bool> open{false};
    std::atomic<bool> entered{false};
    // A host function: halLaunchHostFunc(stream, Gate::hold, &gate).
    static void hold(void* gate) {
        auto* self = static_cast<Gate*>(gate);
        self->entered = true;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!self->open && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
};

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_GATE_HPP_
