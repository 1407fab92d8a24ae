// The failures of a stream's graph launches that the host-work thread meets
// (engine/host_work_thread.hpp): a command of the graph that could not be enqueued, or one that
// failed when it ran. The thread notes each here and completes the launch's user event as if it
// had succeeded; the stream reports what was noted, once, by its next query or synchronisation
// (stream.cpp), naming the operation and OpenCL's error.
//
// Why the user event is never failed: OpenCL hands a negative user event status on to the
// commands that wait for it with an implementation's own status, and PoCL 3.1 does so on a path
// that aborts the process. clSetUserEventStatus with a negative status broadcasts it
// (lib/CL/devices/common.c:723, pocl_broadcast, which holds the user event's lock and the waiting
// command's) to the pthread device's notify (lib/CL/devices/pthread/pthread.c:338), which fails
// the waiting command through pocl_update_event_failed (lib/CL/pocl_util.c:2263): that takes the
// command's queue lock while the user event's is held, the reverse of an enqueue waiting for the
// user event (a lock-order inversion, so a deadlock with a launch on the stream at that moment),
// gives the command CL_FAILED (-1, the value of CL_DEVICE_NOT_FOUND: the stream's report then
// named that), and relocks the command after releasing it (pocl_util.c:2267), which aborts with
// "PTHREAD ERROR in pocl_update_event_failed" once the command is gone.
#ifndef POLYHAL_BACKENDS_OPENCL_ENGINE_HOST_WORK_FAILURES_HPP_
#define POLYHAL_BACKENDS_OPENCL_ENGINE_HOST_WORK_FAILURES_HPP_

#include <atomic>
#include <mutex>
#include <string>

namespace polyhal::opencl {

class HostWorkFailures {
  public:
    // Keeps `message` when it is the first failure not yet taken; counts it otherwise.
    void note(const std::string& message) noexcept;
    // Is a failure noted and not yet taken? One atomic load: asked by every query of a stream.
    bool pending() const { return pending_.load(std::memory_order_acquire); }
    // Takes what was noted: the first failure's message, and how many failed after it. False
    // when nothing was.
    bool take(std::string* first, unsigned* later);

  private:
    std::mutex mutex_;
    std::string first_;
    unsigned later_ = 0;
    std::atomic<bool> pending_{false};
};

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_ENGINE_HOST_WORK_FAILURES_HPP_
