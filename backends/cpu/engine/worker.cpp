// Implements worker.hpp.
#include "engine/worker.hpp"

#include <polyhal/box_rows.hpp>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <variant>

#include "engine/graph_batch.hpp"
#include "engine/kernel_execution.hpp"
#include "event.hpp"
#include "plugin_common/shared_event.hpp"

namespace polyhal::cpu {

namespace {

constexpr int kLowestNice = 19;

// Raises the calling thread's nice value by `increment`. Where that is not permitted the thread
// keeps the priority it inherited: priorities then only order kernel blocks.
void lowerSchedulingPriority(int increment) {
    if (increment <= 0) return;
    const auto thread = static_cast<id_t>(syscall(SYS_gettid));
    errno = 0;
    const int current = getpriority(PRIO_PROCESS, thread);
    if (current == -1 && errno != 0) return;
    setpriority(PRIO_PROCESS, thread, std::min(current + increment, kLowestNice));
}

// Runs one command on the worker thread.
struct Executor {
    Timeline& timeline;
    BlockPool& pool;
    int priority;
    ScratchBuffer& scratch;

    void operator()(std::monostate) const {}

    void operator()(const HostCall& call) const {
        try {
            call.fn(call.userData);
        } catch (...) {
            // Host functions have a C signature; one written in C++ must not unwind into us.
            timeline.recordFailure(
                makeFailure(HAL_ERROR_LAUNCH_FAILED, "a host function threw a C++ exception"));
        }
    }

    void operator()(const CopyBytes& copy) const { std::memmove(copy.dst, copy.src, copy.count); }

    void operator()(const CopyBox& box) const {
        forEachBoxRow(box, [&](size_t dstOffset, size_t srcOffset) {
            std::memmove(box.dst + dstOffset, box.src + srcOffset, box.width);
            return HAL_SUCCESS;
        });
    }

    void operator()(const FillBytes& fill) const { std::memset(fill.dst, fill.value, fill.count); }

    void operator()(KernelLaunch& launch) const {
        if (const std::optional<Failure> failure = executeKernel(launch, priority, pool, scratch)) {
            timeline.recordFailure(*failure);
        }
    }

    void operator()(const EventMarker& marker) const {
        marker.event->stamp(marker.generation, monotonicNanoseconds());
    }

    void operator()(const TimelineWait& wait) const {
        wait.until.timeline->wait(wait.until.ticket, WaitPolicy::kSpinThenSleep);
    }

    void operator()(const SharedEventSignal& signal) const {
        signal.state->publish(signal.generation);
    }

    void operator()(const SharedEventWait& wait) const { wait.state->wait(wait.generation); }

    // As the commands queued one by one would run: a failing step is recorded, the next runs.
    void operator()(const GraphRun& run) const {
        GraphBatch& batch = *run.batch;  // no two runs of one graph overlap (plugin.h)
        for (size_t i = 0; i < batch.size(); ++i) std::visit(*this, batch.step(i));
    }
};

}  // namespace

void Worker::run(int niceIncrement) {
    lowerSchedulingPriority(niceIncrement);
    ScratchBuffer scratch;  // this thread's kernel shared memory
    Command command;
    uint64_t ticket = 0;
    while (queue_.pop(command)) {
        ++ticket;
        std::visit(Executor{timeline_, pool_, priority_, scratch}, command);
        command.emplace<std::monostate>();  // drop its references (events, timelines) now
        timeline_.complete(ticket);
    }
}

}  // namespace polyhal::cpu
