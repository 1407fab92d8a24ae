// Host functions in stream order, and the submissions of graphs' command lists.
//
// launchHostFunc appends, in one step, a barrier that signals `started` once the earlier work
// has finished and a barrier that holds later work until `finished` has signalled. The stream's
// host-function thread waits for `started` on the host, runs the function and signals
// `finished` from the host (zeEventHostSignal).
//
// A graph's launch (Stream::launchRegularList) is queued on the same thread: a regular command
// list may not be executed again while the device may still read it from its previous execution,
// so it is executed only once the stream's earlier work (which the core orders after the graph's
// previous launch) has finished.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_HOST_FUNC_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_HOST_FUNC_HPP_

#include <level_zero/ze_api.h>
#include <polyhal/hal.h>

#include <condition_variable>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include "engine/event_pool.hpp"

namespace polyhal::level_zero {

class Stream;

// A closed regular command list to execute on `queue`. The list signals `end` when it has run;
// should it not be submitted, the thread signals `end` itself, so that the stream does not wait
// forever. `owner` keeps the list alive until the stream has signalled `finished`.
struct ListExecution {
    ze_command_queue_handle_t queue = nullptr;
    ze_command_list_handle_t list = nullptr;
    ze_event_handle_t end = nullptr;
    std::shared_ptr<const void> owner;
};

// Once `started` has signalled: `fn(userData)`, after which the thread signals `finished`; or,
// without `fn`, `execution` is submitted, and the thread waits for the stream to signal
// `finished` before it lets the list go.
struct HostFuncCall {
    halHostFn fn = nullptr;
    void* userData = nullptr;
    ListExecution execution;
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
    // Submits call.execution once the stream's earlier work has finished (`waited`).
    void launch(const HostFuncCall& call, ze_result_t waited) noexcept;

    Stream* const stream_;  // where failures of the wait or signal are reported
    std::mutex mutex_;
    std::condition_variable ready_;
    std::list<HostFuncCall> queue_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_HOST_FUNC_HPP_
