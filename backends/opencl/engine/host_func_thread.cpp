// The per-stream thread that runs host functions (see host_func_thread.hpp).
#include "engine/host_func_thread.hpp"

#include <polyhal/plugin_support.hpp>

#include <condition_variable>
#include <mutex>

#include "error.hpp"

namespace polyhal::opencl {

struct HostFuncThread::Queue {
    std::mutex mutex;
    std::condition_variable wake;
    HostFuncCalls calls;
    bool closing = false;
};

namespace {

void execute(const HostFuncCall& call) {
    cl_int status = CL_COMPLETE;
    clWaitForEvents(1, &call.ready);
    if (clGetEventInfo(call.ready, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                       nullptr) != CL_SUCCESS ||
        status > 0) {
        status = CL_INVALID_EVENT;
    }
    if (status == CL_COMPLETE) {
        call.fn(call.userData);
    } else {
        // As with cudaLaunchHostFunc, a function after failed work is not called; the failure
        // passes on to the work after it.
        plugin::log(HAL_LOG_WARN, "host function not run: the work before it failed with %s (%d)",
                    errorName(status), status);
    }
    clSetUserEventStatus(call.done, status);
    clReleaseEvent(call.ready);
    clReleaseEvent(call.done);
}

}  // namespace

HostFuncThread::HostFuncThread()
    : queue_(std::make_shared<Queue>()), thread_([queue = queue_] { run(queue); }) {}

void HostFuncThread::run(const std::shared_ptr<Queue>& queue) {
    std::unique_lock lock(queue->mutex);
    for (;;) {
        queue->wake.wait(lock, [&] { return queue->closing || !queue->calls.empty(); });
        if (queue->calls.empty()) return;
        HostFuncCalls current;
        current.splice(current.begin(), queue->calls, queue->calls.begin());
        lock.unlock();
        execute(current.front());
        current.clear();
        lock.lock();
    }
}

HostFuncThread::~HostFuncThread() {
    {
        std::lock_guard lock(queue_->mutex);
        queue_->closing = true;
    }
    queue_->wake.notify_one();
    thread_.detach();
}

void HostFuncThread::post(HostFuncCalls& calls) noexcept {
    {
        std::lock_guard lock(queue_->mutex);
        queue_->calls.splice(queue_->calls.end(), calls);
    }
    queue_->wake.notify_one();
}

}  // namespace polyhal::opencl
