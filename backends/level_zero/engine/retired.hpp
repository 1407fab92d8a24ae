// Objects destroyed by the application while the device may still run their work (streams,
// graphs): Level Zero frees a command list only once idle, and a destroy must not wait, so they
// are retired into a list and destroyed by a later reap that finds them finished.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_RETIRED_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_RETIRED_HPP_

#include <algorithm>
#include <iterator>
#include <mutex>
#include <vector>

namespace polyhal::level_zero {

// Destroys the objects of `retiring` (guarded by `mutex`) whose work has finished
// (isFinished()); with `wait`, every one of them once waitIdle() returns. The destroys run after
// the lock is let go.
template <class Owner>
void reapRetired(std::mutex& mutex, std::vector<Owner>& retiring, bool wait) {
    std::vector<Owner> finished;
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (wait) {
            finished.swap(retiring);
        } else {
            const auto idle =
                std::partition(retiring.begin(), retiring.end(),
                               [](const Owner& owner) { return !owner->isFinished(); });
            finished.reserve(static_cast<size_t>(retiring.end() - idle));
            std::move(idle, retiring.end(), std::back_inserter(finished));
            retiring.erase(idle, retiring.end());
        }
    }
    if (wait) {
        for (const Owner& owner : finished) owner->waitIdle();
    }
}

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_RETIRED_HPP_
