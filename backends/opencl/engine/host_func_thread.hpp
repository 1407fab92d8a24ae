// The per-stream thread that runs host functions in stream order.
//
// launchHostFunc (stream.cpp) enqueues two commands: a marker `ready` (completes when the work
// before it has) and a barrier that waits for a user event `done`. The stream's HostFuncThread
// waits for `ready`, runs the function, then completes `done`, which releases the work after it.
//
// The function runs on a thread of the backend's own, one per stream, rather than inside an
// OpenCL event callback: a callback runs on the OpenCL runtime's thread, where a function that
// blocks (or waits for other OpenCL work, which the specification leaves undefined inside a
// callback) could stall the runtime and deadlock it. One thread per stream keeps host functions
// of different streams concurrent and those of one stream in order.
#ifndef POLYHAL_BACKENDS_OPENCL_ENGINE_HOST_FUNC_THREAD_HPP_
#define POLYHAL_BACKENDS_OPENCL_ENGINE_HOST_FUNC_THREAD_HPP_

#include <CL/cl.h>
#include <polyhal/hal.h>

#include <list>
#include <memory>
#include <thread>

namespace polyhal::opencl {

struct HostFuncCall {
    cl_event ready;  // marker after the work the function follows
    halHostFn fn;
    void* userData;
    cl_event done;  // user event the work after the function waits for
};

// A list so that a call can be allocated before its commands are enqueued and then handed over
// without a possible allocation failure (std::list::splice does not allocate).
using HostFuncCalls = std::list<HostFuncCall>;

// Owns the thread; its queue is shared with the thread so that the thread can outlive it.
class HostFuncThread {
  public:
    HostFuncThread();  // throws std::system_error when no thread can be started
    // Never waits for queued calls: the thread is detached, runs them and then ends on its own
    // (a plugin is never unloaded, so its code stays loaded while the thread runs).
    ~HostFuncThread();
    HostFuncThread(const HostFuncThread&) = delete;
    HostFuncThread& operator=(const HostFuncThread&) = delete;

    // Queues calls (the thread owns their events from now on). Never throws.
    void post(HostFuncCalls& calls) noexcept;

  private:
    struct Queue;
    static void run(const std::shared_ptr<Queue>& queue);

    std::shared_ptr<Queue> queue_;
    std::thread thread_;
};

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_ENGINE_HOST_FUNC_THREAD_HPP_
