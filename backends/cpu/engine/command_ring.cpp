// Implements command_ring.hpp.
#include "engine/command_ring.hpp"

#include <utility>

namespace polyhal::cpu {

namespace {
constexpr size_t kInitialCapacity = 32;
}  // namespace

CommandRing::CommandRing() : slots_(kInitialCapacity) {}

void CommandRing::push(Command&& command) {
    if (count_ == slots_.size()) grow();
    slots_[(head_ + count_) & mask()] = std::move(command);
    ++count_;
}

bool CommandRing::pop(Command& command) {
    if (count_ == 0) return false;
    Command& slot = slots_[head_];
    command = std::move(slot);
    slot.emplace<std::monostate>();
    head_ = (head_ + 1) & mask();
    --count_;
    return true;
}

void CommandRing::grow() {
    std::vector<Command> larger(slots_.size() * 2);  // the only step that may throw
    for (size_t i = 0; i < count_; ++i) larger[i] = std::move(slots_[(head_ + i) & mask()]);
    slots_.swap(larger);
    head_ = 0;
}

}  // namespace polyhal::cpu
