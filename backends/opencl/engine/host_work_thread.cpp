// The per-stream thread for host functions and graph submissions (see host_work_thread.hpp).
#include "engine/host_work_thread.hpp"

#include <polyhal/plugin_support.hpp>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <new>

#include "error.hpp"

namespace polyhal::opencl {

struct HostWorkThread::Queue {
    std::mutex mutex;
    std::condition_variable wake;
    HostWorkList work;
    bool closing = false;
};

namespace {

void CL_CALLBACK completeUserEvent(cl_event, cl_int status, void* userEvent) {
    auto event = static_cast<cl_event>(userEvent);
    clSetUserEventStatus(event, status < 0 ? status : CL_COMPLETE);
    clReleaseEvent(event);
}

void runHostFunction(const HostWork& work) {
    cl_int status = CL_COMPLETE;
    clWaitForEvents(1, &work.ready);
    if (clGetEventInfo(work.ready, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                       nullptr) != CL_SUCCESS ||
        status > 0) {
        status = CL_INVALID_EVENT;
    }
    if (status == CL_COMPLETE) {
        work.fn(work.userData);
    } else {
        // As with cudaLaunchHostFunc, a function after failed work is not called; the failure
        // passes on to the work after it.
        plugin::log(HAL_LOG_WARN, "host function not run: the work before it failed with %s (%d)",
                    errorName(status), status);
    }
    clSetUserEventStatus(work.done, status);
}

// Notes a batch whose last command ended with the negative `status`: a command failed when it
// ran (OpenCL passes the failure on to the commands after it in the queue).
void noteFailedRun(HostWorkFailures& failures, cl_int status) {
    char message[160];
    std::snprintf(message, sizeof message,
                  "a graph launch failed on the device: its last command ended with %s (%d)",
                  errorName(status), status);
    failures.note(message);
}

// What a batch's completion holds: the user event it completes, the batch, which must outlive
// its commands (a graph's release runs when the batch goes), and where a failure is noted.
struct BatchCompletion {
    cl_event done;
    std::shared_ptr<const CommandBatch> batch;
    std::shared_ptr<HostWorkFailures> failures;
};

// The batch goes first: a graph's release has run once the work after the launch can start.
void CL_CALLBACK completeBatch(cl_event, cl_int status, void* context) {
    auto* completion = static_cast<BatchCompletion*>(context);
    const cl_event done = completion->done;
    if (status < 0) noteFailedRun(*completion->failures, status);
    delete completion;
    clSetUserEventStatus(done, CL_COMPLETE);
    clReleaseEvent(done);
}

// The commands the batch did enqueue run whatever happened after them: `done` completes with
// the last of them. A batch that could not be enqueued whole is noted as failed, and `done`
// completes once the work before it and the part it enqueued have finished, so that nothing
// after the launch starts early and the batch outlives its commands. The work's reference to
// the batch is let go before `done` completes. Where no callback can be set, this thread waits
// for the last command.
void submitBatch(HostWork& work) {
    std::shared_ptr<const CommandBatch> batch = std::move(work.batch);
    cl_event last = nullptr;
    std::string failure;
    cl_int status = batch->enqueue(work.batchQueue, work.ready, &last, &failure);
    if (status == CL_SUCCESS) {
        clFlush(work.batchQueue);
        auto* completion = new (std::nothrow) BatchCompletion{work.done, batch, work.failures};
        if (completion != nullptr) {
            batch.reset();  // the completion's now
            clRetainEvent(work.done);
            status = clSetEventCallback(last, CL_COMPLETE, completeBatch, completion);
            if (status == CL_SUCCESS) {
                clReleaseEvent(last);
                return;
            }
            clReleaseEvent(work.done);
            batch = std::move(completion->batch);
            delete completion;
        }
    } else {
        // Noted at once: the stream's next synchronisation waits for `done`, which follows.
        plugin::log(HAL_LOG_ERROR, "a graph launch could not enqueue its commands: %s",
                    failure.c_str());
        work.failures->note(failure);
    }
    clWaitForEvents(1, &work.ready);
    clFinish(work.batchQueue);
    if (last != nullptr) {
        cl_int lastStatus = CL_COMPLETE;
        clGetEventInfo(last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof lastStatus, &lastStatus,
                       nullptr);
        if (lastStatus < 0) noteFailedRun(*work.failures, lastStatus);
        clReleaseEvent(last);
    }
    batch.reset();
    clSetUserEventStatus(work.done, CL_COMPLETE);
}

void execute(HostWork& work) {
    if (work.batch) {
        submitBatch(work);
        clReleaseCommandQueue(work.batchQueue);
    } else {
        runHostFunction(work);
    }
    clReleaseEvent(work.ready);
    clReleaseEvent(work.done);
}

}  // namespace

cl_int completeWhenDone(cl_event event, cl_event userEvent) {
    clRetainEvent(userEvent);  // the callback's reference
    const cl_int error = clSetEventCallback(event, CL_COMPLETE, completeUserEvent, userEvent);
    if (error != CL_SUCCESS) clReleaseEvent(userEvent);
    return error;
}

HostWorkThread::HostWorkThread()
    : queue_(std::make_shared<Queue>()), thread_([queue = queue_] { run(queue); }) {}

void HostWorkThread::run(const std::shared_ptr<Queue>& queue) {
    std::unique_lock lock(queue->mutex);
    for (;;) {
        queue->wake.wait(lock, [&] { return queue->closing || !queue->work.empty(); });
        if (queue->work.empty()) return;
        HostWorkList current;
        current.splice(current.begin(), queue->work, queue->work.begin());
        lock.unlock();
        execute(current.front());
        current.clear();
        lock.lock();
    }
}

HostWorkThread::~HostWorkThread() {
    {
        std::lock_guard lock(queue_->mutex);
        queue_->closing = true;
    }
    queue_->wake.notify_one();
    thread_.detach();
}

void HostWorkThread::post(HostWorkList& work) noexcept {
    {
        std::lock_guard lock(queue_->mutex);
        queue_->work.splice(queue_->work.end(), work);
    }
    queue_->wake.notify_one();
}

}  // namespace polyhal::opencl
