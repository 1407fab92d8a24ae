// The per-stream thread for the work a stream's host side does in stream order: host functions
// and graph submissions.
//
// Stream::postHostWork (stream.cpp) enqueues two commands: a marker `ready` (completes when the
// work before it has) and a barrier that waits for a user event `done`. The stream's
// HostWorkThread then
//   - for a host function: waits for `ready`, runs the function, then completes `done`;
//   - for a graph: enqueues the graph's commands on a queue of their own, the first after
//     `ready`, and has the last one's completion complete `done` (an event callback that does
//     nothing else). The caller's thread thus spends a user event, a marker, a barrier and a
//     flush on a launch, whatever the graph holds. A graph that fails (a command that cannot be
//     enqueued, or fails when it runs) is noted in the stream's HostWorkFailures and `done`
//     completes all the same (engine/host_work_failures.hpp says why).
// Either way `done` releases the stream's work after it.
//
// Host functions run on a thread of the backend's own, one per stream, rather than inside an
// OpenCL event callback: a callback runs on the OpenCL runtime's thread, where a function that
// blocks (or waits for other OpenCL work, which the specification leaves undefined inside a
// callback) could stall the runtime and deadlock it. One thread per stream keeps host functions
// of different streams concurrent and those of one stream in order.
#ifndef POLYHAL_BACKENDS_OPENCL_ENGINE_HOST_WORK_THREAD_HPP_
#define POLYHAL_BACKENDS_OPENCL_ENGINE_HOST_WORK_THREAD_HPP_

#include <CL/cl.h>
#include <polyhal/hal.h>

#include <list>
#include <memory>
#include <string>
#include <thread>

#include "engine/host_work_failures.hpp"

namespace polyhal::opencl {

// Commands enqueued together on a queue of their own (a graph's).
class CommandBatch {
  public:
    virtual ~CommandBatch() = default;
    // Enqueues the commands on `queue` in order, the first after `after`; *last receives the
    // last one's event. The first failing call's error, with *failure naming the command and
    // the call: the commands before it stay enqueued.
    virtual cl_int enqueue(cl_command_queue queue, cl_event after, cl_event* last,
                           std::string* failure) const = 0;
};

struct HostWork {
    cl_event ready = nullptr;  // marker after the work this follows
    cl_event done = nullptr;   // user event the work after this waits for
    // A host function...
    halHostFn fn = nullptr;
    void* userData = nullptr;
    // ...or a batch, enqueued on batchQueue (the thread holds a reference to it), whose
    // failures go to `failures`, the stream's.
    std::shared_ptr<const CommandBatch> batch;
    cl_command_queue batchQueue = nullptr;
    std::shared_ptr<HostWorkFailures> failures;
};

// A list so that work can be allocated before its commands are enqueued and then handed over
// without a possible allocation failure (std::list::splice does not allocate).
using HostWorkList = std::list<HostWork>;

// Owns the thread; its queue is shared with the thread so that the thread can outlive it.
class HostWorkThread {
  public:
    HostWorkThread();  // throws std::system_error when no thread can be started
    // Never waits for queued work: the thread is detached, does it and then ends on its own (a
    // plugin is never unloaded, so its code stays loaded while the thread runs).
    ~HostWorkThread();
    HostWorkThread(const HostWorkThread&) = delete;
    HostWorkThread& operator=(const HostWorkThread&) = delete;

    // Queues work (the thread owns its events and queue references from now on). Never throws.
    void post(HostWorkList& work) noexcept;

  private:
    struct Queue;
    static void run(const std::shared_ptr<Queue>& queue);

    std::shared_ptr<Queue> queue_;
    std::thread thread_;
};

// Completes the user event `userEvent` with `event`'s final status once `event` completes
// (an event callback; it takes its own reference to userEvent).
cl_int completeWhenDone(cl_event event, cl_event userEvent);

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_ENGINE_HOST_WORK_THREAD_HPP_
