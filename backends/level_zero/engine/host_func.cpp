// A stream's host-function thread.
#include "engine/host_func.hpp"

#include <cstdio>

#include "engine/host_wait.hpp"
#include "error.hpp"
#include "stream.hpp"
#include "symbols.hpp"

namespace polyhal::level_zero {

HostFuncThread::HostFuncThread(Stream* stream) : stream_(stream), thread_([this] { run(); }) {}

HostFuncThread::~HostFuncThread() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    ready_.notify_one();
    thread_.join();
}

void HostFuncThread::submit(std::list<HostFuncCall>* calls) noexcept {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.splice(queue_.end(), *calls);
    }
    ready_.notify_one();
}

void HostFuncThread::run() noexcept {
    for (;;) {
        std::list<HostFuncCall> call;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;
            call.splice(call.end(), queue_, queue_.begin());
        }
        execute(call.front());
    }
}

void HostFuncThread::execute(const HostFuncCall& call) noexcept {
    char message[256];
    // The earlier work may take long: wait without occupying a core.
    const ze_result_t waited = waitSleeping(call.started->event);
    if (waited == ZE_RESULT_SUCCESS) {
        call.fn(call.userData);
    } else {
        std::snprintf(message, sizeof message,
                      "a host function was not run: zeEventQueryStatus: %s (%s)",
                      resultName(waited), resultDescription(waited));
        stream_->setAsyncError(toHalError(waited), message);
    }
    // Released, or signalled, even when the function did not run, so the stream does not wait
    // forever.
    if (call.holdsLaterWork) {
        stream_->releaseHeld();
        return;
    }
    const ze_result_t signalled = ze.zeEventHostSignal.address(call.finished->event);
    if (signalled != ZE_RESULT_SUCCESS) {
        std::snprintf(message, sizeof message, "after a host function: zeEventHostSignal: %s (%s)",
                      resultName(signalled), resultDescription(signalled));
        stream_->setAsyncError(toHalError(signalled), message);
    }
}

}  // namespace polyhal::level_zero
