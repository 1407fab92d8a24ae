// Streams are in-order OpenCL command queues; host functions run, and graphs are enqueued, in
// their order on a thread of the stream's own (engine/host_work_thread.hpp).
#include "stream.hpp"

#include <CL/cl_ext.h>

#include <memory>

#include "device.hpp"
#include "engine/cl_info.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "event.hpp"

namespace polyhal::opencl {

namespace {

// Maps polyhal's priority, clamped by the core to the range deviceGetInfo reports (-1 highest,
// 1 lowest), to cl_khr_priority_hints.
cl_queue_priority_khr priorityHint(int priority) {
    if (priority < 0) return CL_QUEUE_PRIORITY_HIGH_KHR;
    if (priority > 0) return CL_QUEUE_PRIORITY_LOW_KHR;
    return CL_QUEUE_PRIORITY_MED_KHR;
}

// An in-order queue of `device` with `priority` as a hint, profiling where asked for and the
// device can.
halError createQueue(const Device& device, int priority, bool profiling, cl_command_queue* queue) {
    cl_queue_properties properties[5] = {0};
    size_t next = 0;
    if (profiling && device.profiling()) {
        properties[next++] = CL_QUEUE_PROPERTIES;
        properties[next++] = CL_QUEUE_PROFILING_ENABLE;
    }
    if (device.priorityHints()) {
        properties[next++] = CL_QUEUE_PRIORITY_KHR;
        properties[next++] = priorityHint(priority);
    }
    cl_int error = CL_SUCCESS;
    *queue = clCreateCommandQueueWithProperties(device.context(), device.id(), properties, &error);
    return *queue == nullptr ? checkCall(error, "clCreateCommandQueueWithProperties") : HAL_SUCCESS;
}

}  // namespace

Stream::~Stream() {
    if (last_ != nullptr) clReleaseEvent(last_);
    // OpenCL finishes what the queues hold before it deletes them; the host-work thread holds
    // references of its own to the batch queue while it has work for it.
    if (batchQueue_ != nullptr) clReleaseCommandQueue(batchQueue_);
    clReleaseCommandQueue(queue_);
}

HostWorkThread& Stream::hostWorkThread() {
    if (!hostWork_) hostWork_ = std::make_unique<HostWorkThread>();
    return *hostWork_;
}

halError Stream::postHostWork(HostWorkList& work, cl_event* doneForCaller) {
    return submit([&](cl_event* last) {
        HostWorkThread& thread = hostWorkThread();
        HostWork& item = work.front();
        if (item.batch) {
            if (batchQueue_ == nullptr) {
                // Events are timed on the stream's own queue only.
                if (halError error = createQueue(device_, priority_, false, &batchQueue_)) {
                    return error;
                }
            }
            item.batchQueue = batchQueue_;
        }
        cl_int error = CL_SUCCESS;
        cl_event done = clCreateUserEvent(device_.context(), &error);
        if (done == nullptr) return checkCall(error, "clCreateUserEvent");
        cl_event ready = nullptr;
        error = clEnqueueMarkerWithWaitList(queue_, 0, nullptr, &ready);
        if (error != CL_SUCCESS) {
            clReleaseEvent(done);
            return checkCall(error, "clEnqueueMarkerWithWaitList");
        }
        error = clEnqueueBarrierWithWaitList(queue_, 1, &done, last);
        if (error != CL_SUCCESS) {
            clReleaseEvent(done);
            *last = ready;  // enqueued: the stream's last command now
            return checkCall(error, "clEnqueueBarrierWithWaitList");
        }
        clFlush(queue_);  // the host-work thread waits for `ready`: make sure it starts
        item.ready = ready;
        item.done = done;
        if (item.batch) {
            clRetainCommandQueue(batchQueue_);
            item.failures = hostWorkFailures_;
        }
        if (doneForCaller != nullptr) {
            clRetainEvent(done);
            *doneForCaller = done;
        }
        thread.post(work);
        return HAL_SUCCESS;
    });
}

void Stream::noteCompleted(uint64_t sequence) {
    uint64_t seen = completed_.load(std::memory_order_relaxed);
    while (seen < sequence &&
           !completed_.compare_exchange_weak(seen, sequence, std::memory_order_release,
                                             std::memory_order_relaxed)) {
    }
}

halError Stream::query() {
    if (knownIdle()) return HAL_SUCCESS;
    {
        std::lock_guard lock(mutex_);
        if (last_ == nullptr) return HAL_SUCCESS;
        const uint64_t sequence = sequence_.load(std::memory_order_relaxed);
        cl_int status = CL_COMPLETE;
        if (halError error = executionStatus(last_, &status)) return error;
        if (status == CL_COMPLETE) {
            noteCompleted(sequence);
            return reportHostWorkFailures();
        }
        if (status < 0) return reportFailure(status, sequence);
    }
    // OpenCL starts commands for certain only once they are flushed; a caller polling the
    // stream relies on them starting.
    clFlush(queue_);
    return HAL_ERROR_NOT_READY;
}

halError Stream::waitForLast(cl_int* status, uint64_t* sequence) {
    *status = CL_COMPLETE;
    if (knownIdle()) return HAL_SUCCESS;  // *sequence is only read for a failure
    cl_event last = nullptr;
    {
        std::lock_guard lock(mutex_);
        *sequence = sequence_.load(std::memory_order_relaxed);
        if (last_ == nullptr) return HAL_SUCCESS;
        last = last_;
        clRetainEvent(last);
    }
    clFlush(queue_);
    const halError result = waitForCommand(last, status);
    clReleaseEvent(last);
    if (result == HAL_SUCCESS && *status == CL_COMPLETE) noteCompleted(*sequence);
    return result;
}

halError Stream::synchronize() {
    cl_int status = CL_COMPLETE;
    uint64_t sequence = 0;
    if (halError error = waitForLast(&status, &sequence)) return error;
    if (status >= 0 && !hostWorkFailures_->pending()) return HAL_SUCCESS;
    std::lock_guard lock(mutex_);
    return status >= 0 ? reportHostWorkFailures() : reportFailure(status, sequence);
}

halError Stream::waitIdle() {
    cl_int status = CL_COMPLETE;
    uint64_t sequence = 0;
    return waitForLast(&status, &sequence);
}

halError Stream::reportFailure(cl_int status, uint64_t sequence) {
    if (sequence == reportedSequence_) return HAL_SUCCESS;
    reportedSequence_ = sequence;
    if (hostWorkFailures_->pending()) return reportHostWorkFailures();
    return plugin::fail(HAL_ERROR_LAUNCH_FAILED, "work on the stream failed: %s (%d)",
                        errorName(status), status);
}

halError Stream::reportHostWorkFailures() {
    std::string first;
    unsigned later = 0;
    if (!hostWorkFailures_->take(&first, &later)) return HAL_SUCCESS;
    if (later == 0) {
        return plugin::fail(HAL_ERROR_LAUNCH_FAILED, "work on the stream failed: %s",
                            first.c_str());
    }
    return plugin::fail(HAL_ERROR_LAUNCH_FAILED,
                        "work on the stream failed: %s; %u more graph launch%s failed after it",
                        first.c_str(), later, later == 1 ? "" : "es");
}

namespace {

// A user event of the stream's context that completes when `foreign`, a command of another
// context (a device of another platform), does: OpenCL cannot wait for the foreign event itself.
halError standInFor(cl_event foreign, cl_context context, cl_event* standIn) {
    cl_int error = CL_SUCCESS;
    cl_event event = clCreateUserEvent(context, &error);
    if (event == nullptr) return checkCall(error, "clCreateUserEvent");
    error = completeWhenDone(foreign, event);
    if (error != CL_SUCCESS) {
        clReleaseEvent(event);
        return checkCall(error, "clSetEventCallback");
    }
    *standIn = event;
    return HAL_SUCCESS;
}

}  // namespace

halError streamCreate(halPluginDevice device, int priority, uint32_t /*flags: none defined*/,
                      halPluginStream* stream) {
    Device& owner = plugin::fromHandle<Device>(device);
    cl_command_queue queue = nullptr;
    if (halError error = createQueue(owner, priority, true, &queue)) return error;
    std::shared_ptr<Stream> created;
    try {
        created = std::make_shared<Stream>(owner, queue, priority);
    } catch (...) {
        clReleaseCommandQueue(queue);
        throw;
    }
    Stream* handle = created.get();
    owner.addStream(std::move(created));
    *stream = plugin::toHandle(handle);
    return HAL_SUCCESS;
}

halError streamDestroy(halPluginStream stream) {
    const Stream& self = plugin::fromHandle<Stream>(stream);
    self.device().retireStream(self);
    return HAL_SUCCESS;
}

halError streamSynchronize(halPluginStream stream) {
    return plugin::fromHandle<Stream>(stream).synchronize();
}

halError streamQuery(halPluginStream stream) {
    return plugin::fromHandle<Stream>(stream).query();
}

halError streamWaitEvent(halPluginStream stream, halPluginEvent event) {
    Stream& self = plugin::fromHandle<Stream>(stream);
    const Event& awaited = plugin::fromHandle<Event>(event);
    auto enqueueBarrier = [&](cl_event* last, cl_event waitFor) {
        if (waitFor == nullptr) return HAL_SUCCESS;  // never recorded: no wait
        return checkCall(clEnqueueBarrierWithWaitList(self.queue(), 1, &waitFor, last),
                         "clEnqueueBarrierWithWaitList");
    };
    if (awaited.device().context() == self.device().context()) {
        return self.submit([&](cl_event* last) {
            return awaited.withMarker(
                [&](cl_event marker) { return enqueueBarrier(last, marker); });
        });
    }
    cl_event marker = awaited.marker();
    if (marker == nullptr) return HAL_SUCCESS;
    cl_event standIn = nullptr;
    const halError result = standInFor(marker, self.device().context(), &standIn);
    clReleaseEvent(marker);
    if (result != HAL_SUCCESS) return result;
    const halError submitted =
        self.submit([&](cl_event* last) { return enqueueBarrier(last, standIn); });
    clReleaseEvent(standIn);
    return submitted;
}

halError streamGetNativeHandle(halPluginStream stream, void** native) {
    *native = plugin::fromHandle<Stream>(stream).queue();
    return HAL_SUCCESS;
}

// The stream's host-work thread runs `fn` once the work before it is done, then releases the
// work after it (engine/host_work_thread.hpp).
halError launchHostFunc(halPluginStream stream, halHostFn fn, void* userData) {
    HostWorkList work(1);
    work.front().fn = fn;
    work.front().userData = userData;
    return plugin::fromHandle<Stream>(stream).postHostWork(work);
}

}  // namespace polyhal::opencl
