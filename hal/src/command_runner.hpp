// The runner: where a public function hands the operation it built (command.hpp). While the
// stream is captured the command is recorded into the capture; otherwise it goes through the one
// hook sequence around the plugin call (stream_ops.hpp, enqueueOnStream).
#ifndef POLYHAL_HAL_SRC_COMMAND_RUNNER_HPP_
#define POLYHAL_HAL_SRC_COMMAND_RUNNER_HPP_

#include "command.hpp"

namespace polyhal {

// Records `command` into the capture of `stream` where one is under way, else enqueues it.
halError runCommand(halStream_t* stream, Command command, const char* operation);

// Enqueues `command` on `stream` now: the trace times it, the race detector and the pool learn
// what it touches once the backend accepted it. A capturing stream refuses it (work with no
// captured form, such as a synchronous call's).
halError submitCommand(halStream_t* stream, const Command& command, const char* operation);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_COMMAND_RUNNER_HPP_
