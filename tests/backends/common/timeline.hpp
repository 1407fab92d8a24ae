// The execution model the doubles share, after the vendors' documentation: each stream runs its
// work in submission order on a worker thread of its own; a marker is a point in a stream
// (what an event's record captures); a stream may wait for a marker of another stream without
// blocking the host; host functions of every stream run one at a time on ONE driver thread, as
// CUDA may run them. A device has a few hardware queues, and streams beyond that number share
// one: the work of a queue's streams runs one item at a time, in the order it was submitted, so
// a stream that waits (for a marker, a host function) holds every stream of its queue.
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_TIMELINE_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_TIMELINE_HPP_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

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

// One hardware queue: its streams' work, in the order it was submitted (tickets), one at a time.
class HardwareQueue {
  public:
    uint64_t ticket();
    void waitForTurn(uint64_t ticket);
    void finishTurn();

  private:
    std::mutex mutex_;
    std::condition_variable served_;
    uint64_t next_ = 0;
    uint64_t serving_ = 0;
};

// A device's hardware queues, as ROCm hands them to streams (ROCm/clr
// rocclr/device/rocm/rocdevice.cpp:3006-3031, Device::getQueueFromPool): a queue of its own while
// fewer than `limit` exist or one is unused, else the queue with the fewest streams. A stream
// keeps its queue until it is destroyed and has drained.
class HardwareQueues {
  public:
    explicit HardwareQueues(size_t limit) : limit_(limit) {}
    std::shared_ptr<HardwareQueue> acquire();

  private:
    std::mutex mutex_;
    size_t limit_;
    std::vector<std::shared_ptr<HardwareQueue>> queues_;
};

// The number of hardware queues a device has: `variable` (the vendor's own environment variable)
// where set to a positive number, else `fallback` (the vendor's default).
size_t hardwareQueueLimit(const char* variable, size_t fallback);

class Stream {
  public:
    // A stream with a hardware queue of its own.
    Stream();
    // A stream whose work runs on `queue`, which other streams may share.
    explicit Stream(std::shared_ptr<HardwareQueue> queue);
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
    // The work not yet started, each with its turn on the hardware queue.
    std::deque<std::pair<uint64_t, std::function<void()>>> queue_;
    size_t running_ = 0;
    bool stopping_ = false;
    std::shared_ptr<HardwareQueue> hardware_;
    std::thread worker_;
};

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_TIMELINE_HPP_
