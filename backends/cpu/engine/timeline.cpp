// Implements timeline.hpp.
#include "engine/timeline.hpp"

#include <cstdarg>
#include <cstdio>
#include <utility>

namespace polyhal::cpu {

Failure makeFailure(halError code, const char* format, ...) {
    Failure failure;
    failure.code = code;
    va_list args;
    va_start(args, format);
    std::vsnprintf(failure.message, sizeof failure.message, format, args);
    va_end(args);
    return failure;
}

void Timeline::recordFailure(const Failure& failure) {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    if (pending_) {
        pending_->laterFailures += 1 + failure.laterFailures;
        return;
    }
    pending_ = failure;
    hasPending_.store(true, std::memory_order_release);
}

std::optional<Failure> Timeline::takeRecordedFailure() {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    std::optional<Failure> failure = std::move(pending_);
    pending_.reset();
    hasPending_.store(false, std::memory_order_relaxed);
    return failure;
}

}  // namespace polyhal::cpu
