// The backend's stream: an in-order OpenCL command queue and its last command.
#ifndef POLYHAL_BACKENDS_OPENCL_STREAM_HPP_
#define POLYHAL_BACKENDS_OPENCL_STREAM_HPP_

#include <CL/cl.h>
#include <polyhal/plugin.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "engine/host_work_failures.hpp"
#include "engine/host_work_thread.hpp"

namespace polyhal::opencl {

class Device;

// What halPluginStream points to. Owned jointly by its device and by whoever waits for it
// (Device::synchronize), so that a stream destroyed meanwhile stays alive until the wait ends.
class Stream {
  public:
    using Handle = halPluginStream;

    // Takes over `queue` (in order, profiling enabled where the device can), made with
    // `priority`. Throws std::bad_alloc.
    Stream(Device& device, cl_command_queue queue, int priority)
        : device_(device),
          queue_(queue),
          priority_(priority),
          hostWorkFailures_(std::make_shared<HostWorkFailures>()) {}
    // Releases the queue; OpenCL finishes its submitted work and deletes it afterwards.
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    Device& device() const { return device_; }
    cl_command_queue queue() const { return queue_; }

    // Enqueues work under the stream's lock, so that the commands of one `body` are adjacent in
    // the queue. `body(cl_event* last)` returns a halError and stores the event of the last
    // command it enqueued in *last (the stream takes that reference over); it becomes the
    // stream's last command, the one query and synchronize look at.
    template <class Body>
    halError submit(Body&& body) {
        std::lock_guard lock(mutex_);
        cl_event last = nullptr;
        const halError result = body(&last);
        if (last != nullptr) {
            if (last_ != nullptr) clReleaseEvent(last_);
            last_ = last;
            sequence_.store(sequence_.load(std::memory_order_relaxed) + 1,
                            std::memory_order_release);
        }
        return result;
    }

    // HAL_SUCCESS when the last command has finished, HAL_ERROR_NOT_READY while it runs, or its
    // failure, or that of a graph launch before it, as HAL_ERROR_LAUNCH_FAILED (each failed
    // command and launch is reported once).
    halError query();
    // Waits for the last command, then as query.
    halError synchronize();
    // Waits for the last command and leaves a failure pending for the next query.
    halError waitIdle();

    // Enqueues a marker and a barrier on a user event, and hands `work` (one item, whose fn or
    // batch is set) to the stream's host-work thread, which completes the user event (see
    // engine/host_work_thread.hpp). A batch goes to the stream's batch queue, made on first use.
    // With `done`, the user event, retained for the caller.
    halError postHostWork(HostWorkList& work, cl_event* done = nullptr);

  private:
    // Has the last command already been seen finished without failure (or was none enqueued),
    // and no graph launch's failure waits to be reported? Then query and synchronize answer
    // without a lock or an OpenCL call: an idle stream is polled and synchronized often, and
    // clFinish on an idle queue costs next to nothing.
    bool knownIdle() const {
        return completed_.load(std::memory_order_acquire) ==
                   sequence_.load(std::memory_order_acquire) &&
               !hostWorkFailures_->pending();
    }
    // The command numbered `sequence` finished without failure, and with it all before it.
    void noteCompleted(uint64_t sequence);
    // Waits for the command that was last when called; gives its final status and number.
    halError waitForLast(cl_int* status, uint64_t* sequence);
    // Reports a failed command once; HAL_SUCCESS when it was reported before. A graph launch's
    // failure noted meanwhile is reported instead: the command may only have followed it.
    // Lock held.
    halError reportFailure(cl_int status, uint64_t sequence);
    // Reports the graph launches' failures noted so far, if any. Lock held.
    halError reportHostWorkFailures();

    // The thread that does this stream's host work, started on first use. Lock held.
    HostWorkThread& hostWorkThread();

    Device& device_;
    const cl_command_queue queue_;
    const int priority_;

    std::mutex mutex_;
    cl_event last_ = nullptr;
    // Commands that became last_, numbering them; written under mutex_, read without it too.
    std::atomic<uint64_t> sequence_{0};
    std::atomic<uint64_t> completed_{0};  // the last command seen finished without failure
    uint64_t reportedSequence_ = 0;       // the last_ whose failure was already reported
    std::unique_ptr<HostWorkThread> hostWork_;
    // A second queue for the graphs launched on the stream (engine/host_work_thread.hpp), made
    // on first launch: their commands are enqueued on it while the stream's own queue holds the
    // work after them.
    cl_command_queue batchQueue_ = nullptr;
    // Where the host-work thread notes the graph launches that failed; shared with it, since it
    // may still run a launch after the stream is gone.
    const std::shared_ptr<HostWorkFailures> hostWorkFailures_;
};

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_STREAM_HPP_
