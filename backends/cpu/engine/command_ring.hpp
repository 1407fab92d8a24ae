// A growable ring buffer of commands. Not thread-safe: CommandQueue locks around it.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_COMMAND_RING_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_COMMAND_RING_HPP_

#include <cstddef>
#include <vector>

#include "engine/command.hpp"

namespace polyhal::cpu {

class CommandRing {
  public:
    CommandRing();

    // Appends `command`, doubling the capacity when full. Throws std::bad_alloc when growing
    // fails, leaving the ring (and `command`) unchanged.
    void push(Command&& command);
    // Moves the oldest command into `command`; false when empty.
    bool pop(Command& command);

  private:
    void grow();
    size_t mask() const { return slots_.size() - 1; }

    std::vector<Command> slots_;  // size is a power of two
    size_t head_ = 0;
    size_t count_ = 0;
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_COMMAND_RING_HPP_
