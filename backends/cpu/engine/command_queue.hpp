// A stream's queue: submitters push commands under a short lock and get their ticket; the
// stream's worker pops them in order, spinning briefly and then sleeping on a futex when idle.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_COMMAND_QUEUE_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_COMMAND_QUEUE_HPP_

#include <atomic>
#include <cstdint>
#include <mutex>

#include "engine/command.hpp"
#include "engine/command_ring.hpp"
#include "engine/notifier.hpp"
#include "engine/timeline.hpp"

namespace polyhal::cpu {

class CommandQueue {
  public:
    explicit CommandQueue(Timeline& timeline) : timeline_(timeline) {}

    // Enqueues `command` and returns its ticket on the timeline. Thread-safe. Throws
    // std::bad_alloc when the ring cannot grow; nothing is enqueued then.
    uint64_t push(Command&& command);

    // Worker side: waits for the next command and moves it into `command`. Returns false once
    // the queue is closed and everything pushed before has been popped.
    bool pop(Command& command);

    // No more pushes will come; the worker drains what is queued and stops.
    void close();

  private:
    Timeline& timeline_;
    std::mutex mutex_;
    CommandRing ring_;
    uint64_t popped_ = 0;  // worker only
    std::atomic<bool> closed_{false};
    Notifier available_;
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_COMMAND_QUEUE_HPP_
