// Host functions in stream order.
//
// launchHostFunc appends a barrier that signals `started` once the earlier work has finished,
// and holds the stream's later work on the host (stream.hpp). The stream's host-function thread
// waits for `started` on the host, runs the function and releases the held work. Where the driver
// cannot submit held work (no zeCommandListImmediateAppendCommandListsExp), a barrier holds the
// later work on the device until `finished`, which the thread signals from the host.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_HOST_FUNC_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_HOST_FUNC_HPP_

#include <polyhal/hal.h>

#include <condition_variable>
#include <list>
#include <mutex>
#include <thread>

#include "engine/event_pool.hpp"

namespace polyhal::level_zero {

class Stream;

struct HostFuncCall {
    halHostFn fn = nullptr;
    void* userData = nullptr;
    SlotRef started;
    // Whether the stream holds its later work on the host, to be released once the function
    // has run (Stream::releaseHeld). Otherwise the stream's later work waits on the device for
    // `finished`, which the thread signals.
    bool holdsLaterWork = false;
    SlotRef finished;
    SlotRef kept;  // a slot the function uses, kept alive until it has run
};

// The thread that runs one stream's host functions, in submission order.
class HostFuncThread {
  public:
    // Starts the thread (throws std::system_error when it cannot).
    explicit HostFuncThread(Stream* stream);
    // Runs the calls still queued (they wait for their `started` slots), then joins.
    ~HostFuncThread();
    HostFuncThread(const HostFuncThread&) = delete;
    HostFuncThread& operator=(const HostFuncThread&) = delete;

    // Queues the calls of `calls` (moved out). Never throws or allocates, so it can follow
    // appends that cannot be undone.
    void submit(std::list<HostFuncCall>* calls) noexcept;

  private:
    void run() noexcept;
    void execute(const HostFuncCall& call) noexcept;

    Stream* const stream_;  // where failures of the wait or signal are reported
    std::mutex mutex_;
    std::condition_variable ready_;
    std::list<HostFuncCall> queue_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_HOST_FUNC_HPP_
