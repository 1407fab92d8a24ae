// The machinery behind a template stream: an in-order queue of commands that one worker thread
// runs, and the timeline that says how far it has come. A real device does all of this itself;
// with a vendor runtime these classes go away.
#ifndef POLYHAL_TEMPLATE_COMMAND_QUEUE_HPP_
#define POLYHAL_TEMPLATE_COMMAND_QUEUE_HPP_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace polyhal_template {

// How far a stream has come: commands are numbered (their "ticket") in submission order, and the
// worker marks each one completed when it has run. Events and waits share it, so it outlives
// its stream while they refer to it.
class Timeline {
  public:
    void complete(uint64_t ticket);
    bool reached(uint64_t ticket);
    void waitFor(uint64_t ticket);

  private:
    std::mutex mutex_;
    std::condition_variable advanced_;
    uint64_t completed_ = 0;
};

// The point an event record captured: one ticket of one timeline, and when the worker got there
// (stamped before the ticket completes, so it may be read once reached() is true).
struct Marker {
    std::shared_ptr<Timeline> timeline;
    uint64_t ticket = 0;
    std::chrono::steady_clock::time_point reachedAt;
};

// Commands run one after another, in submission order, by the worker thread that calls run().
class CommandQueue {
  public:
    using Command = std::function<void()>;

    // Appends `command`; returns its ticket.
    uint64_t submit(Command command);
    // Appends a command that stamps the time; returns the point it marks.
    std::shared_ptr<Marker> submitMarker();
    // Has every command submitted so far run?
    bool idle();
    // Waits until every command submitted so far has run.
    void synchronize();
    // Called by a command that failed (a faulting kernel): the queue keeps the first failure
    // until it is taken and counts those after it. The commands after it still run.
    void fail(std::string what);
    // The failure not yet reported, with how many more came after it, or "" if none; taking it
    // forgets it (each failure is reported once).
    std::string takeFailure();
    // No more commands will come: the worker runs those queued, then returns from run().
    void close();
    // The worker thread's loop.
    void run();

  private:
    struct Entry {
        uint64_t ticket;
        Command command;
    };

    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Entry> entries_;
    uint64_t submitted_ = 0;
    bool closed_ = false;
    std::string failure_;         // the first failure not yet taken
    uint64_t laterFailures_ = 0;  // and how many came after it
    const std::shared_ptr<Timeline> timeline_ = std::make_shared<Timeline>();
};

}  // namespace polyhal_template

#endif  // POLYHAL_TEMPLATE_COMMAND_QUEUE_HPP_
