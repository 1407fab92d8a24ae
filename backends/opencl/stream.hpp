// The backend's stream: an in-order OpenCL command queue and its last command.
#ifndef POLYHAL_OPENCL_STREAM_HPP_
#define POLYHAL_OPENCL_STREAM_HPP_

#include <CL/cl.h>
#include <polyhal/plugin.h>

#include <cstdint>
#include <memory>
#include <mutex>

#include "host_func.hpp"

struct halPluginStream_t {
    explicit halPluginStream_t(halPluginDevice device) : device(device) {}
    // Releases the queue; OpenCL finishes its submitted work and deletes it afterwards.
    ~halPluginStream_t();
    halPluginStream_t(const halPluginStream_t&) = delete;
    halPluginStream_t& operator=(const halPluginStream_t&) = delete;

    halPluginDevice device;
    cl_command_queue queue = nullptr;  // in order, profiling enabled where the device can

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
            ++sequence_;
        }
        return result;
    }

    // HAL_SUCCESS when the last command has finished, HAL_ERROR_NOT_READY while it runs, or its
    // failure as HAL_ERROR_LAUNCH_FAILED (each failed command is reported once).
    halError query();
    // Waits for the last command, then as query.
    halError synchronize();
    // Waits for the last command and leaves a failure pending for the next query.
    halError waitIdle();

    // The thread that runs this stream's host functions, started on first use. Only from a
    // submit body, which holds the stream's lock.
    polyhal::opencl::HostFuncThread& hostFuncThread();

private:
    // Waits for the command that was last when called; gives its final status and number.
    halError waitForLast(cl_int* status, uint64_t* sequence);
    // Reports a failed command once; HAL_SUCCESS when it was reported before. Lock held.
    halError reportFailure(cl_int status, uint64_t sequence);

    std::mutex mutex_;
    cl_event last_ = nullptr;
    uint64_t sequence_ = 0;          // commands that became last_, numbering them
    uint64_t reportedSequence_ = 0;  // the last_ whose failure was already reported
    std::unique_ptr<polyhal::opencl::HostFuncThread> hostFuncs_;
};

#endif  // POLYHAL_OPENCL_STREAM_HPP_
