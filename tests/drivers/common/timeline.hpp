// The execution model the doubles share, after the vendors' documentation: each stream runs its
// work in submission order on a worker thread of its own; a marker is a point in a stream
// (what an event's record captures); a stream may wait for a marker of another stream without
// blocking the host; host functions of every stream run one at a time on ONE driver thread, as
// CUDA may run them.
#ifndef POLYHAL_TESTS_DRIVERS_COMMON_TIMELINE_HPP_
#define POLYHAL_TESTS_DRIVERS_COMMON_TIMELINE_HPP_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace polyhal::doubles {

// Runs `fn(userData)` on the driver's host-function thread and returns once it has returned: where
// host functions and user-object destructors run, so that a vendor call from inside them is caught.
void runOnHostFunctionThread(void (*fn)(void*), void* userData);

// A point in a stream: complete once the stream has run everything submitted before it.
class Marker {
  public:
    void complete();
    bool done() const;
    void wait() const;
    // When the stream reached the marker; valid once done().
    std::chrono::steady_clock::time_point time() const;

  private:
    mutable std::mutex mutex_;
    mutable std::condition_variable reached_;
    bool done_ = false;
    std::chrono::steady_clock::time_point time_{};
};

class Stream {
  public:
    Stream();
    // Runs the work already submitted, then stops the worker.
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    void submit(std::function<void()> work);
    // Submits a marker and returns it.
    std::shared_ptr<Marker> mark();
    // Later work waits for `marker` (the host does not).
    void waitFor(std::shared_ptr<Marker> marker);
    // Submits `fn(userData)` to run on the driver's host-function thread, in stream order.
    void submitHostFunction(void (*fn)(void*), void* userData);

    bool idle() const;
    void synchronize() const;

  private:
    void run();

    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;
    std::deque<std::function<void()>> queue_;
    size_t running_ = 0;
    bool stopping_ = false;
    std::thread worker_;
};

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_DRIVERS_COMMON_TIMELINE_HPP_
