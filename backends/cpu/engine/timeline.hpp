// The completion timeline of one stream: how much work was submitted, how much has finished,
// and the asynchronous failures of that work.
//
// Every command a stream runs gets the next ticket (1, 2, 3, ...); the stream's worker finishes
// them in order, so "ticket t has completed" is `completed >= t`. Events and cross-stream waits
// capture (timeline, ticket) pairs and hold the timeline by shared ownership, so they stay valid
// after the stream itself is destroyed.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_TIMELINE_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_TIMELINE_HPP_

#include <polyhal/plugin_support.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "engine/notifier.hpp"

namespace polyhal::cpu {

// An asynchronous failure: the error and the message the failing command left. The message is
// stored inline, so recording a failure on a worker thread never allocates (and cannot fail).
struct Failure {
    halError code = HAL_SUCCESS;
    char message[512] = {};
    uint64_t laterFailures = 0;  // failures that came after it before it was reported
};

// A failure with a printf-style message (truncated to fit).
Failure makeFailure(halError code, const char* format, ...) __attribute__((format(printf, 2, 3)));

// Returns the failure's error to the caller of an entry, with its message and the count of the
// failures it stands for (plugin.h: each failure is reported, none is lost without a word).
inline halError report(const Failure& failure) {
    if (failure.laterFailures == 0) return plugin::fail(failure.code, "%s", failure.message);
    return plugin::fail(failure.code, "%s (and %llu later failure(s))", failure.message,
                        static_cast<unsigned long long>(failure.laterFailures));
}

class Timeline {
  public:
    // Tickets handed out so far. Only the stream's command queue calls issueTicket(), under its
    // lock, so tickets follow queue order.
    uint64_t submitted() const { return submitted_.load(std::memory_order_seq_cst); }
    uint64_t issueTicket() { return submitted_.fetch_add(1, std::memory_order_seq_cst) + 1; }

    // Has all work up to `ticket` finished? (Acquires that work's effects.)
    bool reached(uint64_t ticket) const {
        return completed_.load(std::memory_order_seq_cst) >= ticket;
    }

    void wait(uint64_t ticket, WaitPolicy policy) {
        completion_.await([this, ticket] { return reached(ticket); }, policy);
    }

    // Worker side: marks every command up to `ticket` finished (releasing their effects).
    void complete(uint64_t ticket) {
        completed_.store(ticket, std::memory_order_seq_cst);
        completion_.notifyAll();
    }

    // Worker side: a command failed. Call before completing it.
    void recordFailure(const Failure& failure);

    // The first failure since the stream last reported one (streamQuery, streamSynchronize,
    // deviceSynchronize), removed as it is returned: each failure is reported once. Failures
    // that came after it meanwhile are counted in it (laterFailures), not lost without a word.
    // Events do not report failures: the stream does (plugin.h). Inline: polling a stream asks.
    std::optional<Failure> takePendingFailure() {
        if (__builtin_expect(!hasPending_.load(std::memory_order_acquire), 1)) return std::nullopt;
        return takeRecordedFailure();
    }

  private:
    std::optional<Failure> takeRecordedFailure();

    std::atomic<uint64_t> submitted_{0};
    std::atomic<uint64_t> completed_{0};
    Notifier completion_;

    std::atomic<bool> hasPending_{false};  // lets the common no-failure path skip the lock
    std::mutex pendingMutex_;
    std::optional<Failure> pending_;
};

// The work of `timeline` up to and including `ticket`.
struct TimelinePoint {
    std::shared_ptr<Timeline> timeline;
    uint64_t ticket = 0;
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_TIMELINE_HPP_
