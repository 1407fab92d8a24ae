// Host functions in stream order.
//
// launchHostFunc appends, in one step, a barrier that signals `started` once the earlier work
// has finished and a barrier that holds later work until `finished` has signalled. The stream's
// host-function thread waits for `started` on the host, runs the function and signals
// `finished` from the host (zeEventHostSignal).
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
    SlotRef finished;
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
