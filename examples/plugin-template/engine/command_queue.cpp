// The template's command queue and timeline (see command_queue.hpp).
#include "engine/command_queue.hpp"

#include <utility>

namespace polyhal_template {

void Timeline::complete(uint64_t ticket) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        completed_ = ticket;
    }
    advanced_.notify_all();
}

bool Timeline::reached(uint64_t ticket) {
    std::lock_guard<std::mutex> lock(mutex_);
    return completed_ >= ticket;
}

void Timeline::waitFor(uint64_t ticket) {
    std::unique_lock<std::mutex> lock(mutex_);
    advanced_.wait(lock, [&] { return completed_ >= ticket; });
}

uint64_t CommandQueue::submit(Command command) {
    uint64_t ticket;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ticket = ++submitted_;
        entries_.push_back({ticket, std::move(command)});
    }
    changed_.notify_one();
    return ticket;
}

std::shared_ptr<Marker> CommandQueue::submitMarker() {
    auto marker = std::make_shared<Marker>();
    marker->timeline = timeline_;
    // The worker writes only reachedAt; the ticket is published to readers through the event.
    marker->ticket = submit([marker] { marker->reachedAt = std::chrono::steady_clock::now(); });
    return marker;
}

bool CommandQueue::idle() {
    uint64_t last;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        last = submitted_;
    }
    return timeline_->reached(last);
}

void CommandQueue::synchronize() {
    uint64_t last;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        last = submitted_;
    }
    timeline_->waitFor(last);
}

void CommandQueue::fail(std::string what) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_.empty()) {
        failure_ = std::move(what);
    } else {
        ++laterFailures_;
    }
}

std::string CommandQueue::takeFailure() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string failure = std::move(failure_);
    if (laterFailures_ > 0) {
        failure += " (and " + std::to_string(laterFailures_) + " more failed launch(es) after it)";
    }
    failure_.clear();
    laterFailures_ = 0;
    return failure;
}

void CommandQueue::close() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
    }
    changed_.notify_one();
}

void CommandQueue::run() {
    for (;;) {
        Entry entry;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            changed_.wait(lock, [&] { return !entries_.empty() || closed_; });
            if (entries_.empty()) return;  // closed and drained
            entry = std::move(entries_.front());
            entries_.pop_front();
        }
        entry.command();
        timeline_->complete(entry.ticket);
    }
}

}  // namespace polyhal_template
