// Implements deferred_failures.hpp.
#include "deferred_failures.hpp"

#include <utility>

namespace polyhal {

void DeferredFailures::defer(const halStream_t* stream, halError code, std::string message) {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.push_back(Entry{stream, DeferredFailure{code, std::move(message)}});
    count_.store(entries_.size(), std::memory_order_release);
}

std::optional<DeferredFailure> DeferredFailures::take(const halStream_t* stream) {
    if (count_.load(std::memory_order_acquire) == 0) return std::nullopt;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->stream == stream) {
            DeferredFailure failure = std::move(it->failure);
            entries_.erase(it);
            count_.store(entries_.size(), std::memory_order_release);
            return failure;
        }
    }
    return std::nullopt;
}

std::optional<DeferredFailure> DeferredFailures::takeOldest() {
    if (count_.load(std::memory_order_acquire) == 0) return std::nullopt;
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.empty()) return std::nullopt;
    DeferredFailure failure = std::move(entries_.front().failure);
    entries_.pop_front();
    count_.store(entries_.size(), std::memory_order_release);
    return failure;
}

void DeferredFailures::orphan(const halStream_t* stream) {
    if (count_.load(std::memory_order_acquire) == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    for (Entry& entry : entries_) {
        if (entry.stream == stream) entry.stream = nullptr;
    }
}

size_t DeferredFailures::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    const size_t dropped = entries_.size();
    entries_.clear();
    count_.store(0, std::memory_order_release);
    return dropped;
}

}  // namespace polyhal
