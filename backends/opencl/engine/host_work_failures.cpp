// Implements host_work_failures.hpp.
#include "engine/host_work_failures.hpp"

namespace polyhal::opencl {

void HostWorkFailures::note(const std::string& message) noexcept {
    std::lock_guard lock(mutex_);
    if (pending_.load(std::memory_order_relaxed)) {
        ++later_;
        return;
    }
    try {
        first_ = message;
    } catch (...) {
        first_.clear();  // no memory for the text: take() still reports the failure
    }
    later_ = 0;
    pending_.store(true, std::memory_order_release);
}

bool HostWorkFailures::take(std::string* first, unsigned* later) {
    std::lock_guard lock(mutex_);
    if (!pending_.load(std::memory_order_relaxed)) return false;
    first->swap(first_);
    if (first->empty()) *first = "a graph launch failed";
    first_.clear();
    *later = later_;
    pending_.store(false, std::memory_order_release);
    return true;
}

}  // namespace polyhal::opencl
