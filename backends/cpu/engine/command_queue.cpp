// Implements command_queue.hpp.
#include "engine/command_queue.hpp"

#include <utility>

namespace polyhal::cpu {

uint64_t CommandQueue::push(Command&& command) {
    uint64_t ticket;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ring_.push(std::move(command));
        ticket = timeline_.issueTicket();  // the seq_cst change the worker's ready() watches
    }
    available_.notifyAll();
    return ticket;
}

bool CommandQueue::pop(Command& command) {
    available_.await(
        [this] {
            return timeline_.submitted() != popped_ || closed_.load(std::memory_order_seq_cst);
        },
        WaitPolicy::kSpinThenSleep);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!ring_.pop(command)) return false;  // closed and drained
    ++popped_;
    return true;
}

void CommandQueue::close() {
    closed_.store(true, std::memory_order_seq_cst);
    available_.notifyAll();
}

}  // namespace polyhal::cpu
