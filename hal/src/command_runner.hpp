// The runner: where a public function hands the operation it built (command.hpp). While the
// stream is captured the command is recorded into the capture; otherwise it goes through the one
// hook sequence around the plugin call (stream_ops.hpp: submit, enqueueOnStream). Templates over
// the kind of command, so that the eager path calls that kind's functions directly: polling and
// enqueuing are hot paths.
#ifndef POLYHAL_HAL_SRC_COMMAND_RUNNER_HPP_
#define POLYHAL_HAL_SRC_COMMAND_RUNNER_HPP_

#include <utility>
#include <vector>

#include "command.hpp"
#include "stream_ops.hpp"

namespace polyhal {

// Enqueues `command` (of one kind, or a Command) on `stream` now: the trace times it, the race
// detector and the pool learn what it touches once the backend accepted it. A capturing stream
// refuses it (work with no captured form, such as a synchronous call's).
template <typename Kind>
halError submitCommand(halStream_t* stream, const Kind& command, const char* operation) {
    // Room on the stack for the accesses of every command but a kernel with many pointers.
    constexpr size_t kInline = 16;
    check::Access inlineAccesses[kInline];
    std::vector<check::Access> manyAccesses;
    check::Access* accesses = inlineAccesses;
    const size_t most = maxAccesses(command);
    if (__builtin_expect(most > kInline, 0)) {
        manyAccesses.resize(most);
        accesses = manyAccesses.data();
    }
    const size_t count = writeAccesses(command, accesses);
    return submit(stream, operation, accesses, count,
                  [&] { return enqueueCommand(command, stream); });
}

// Records `command` into the capture of `stream` where one is under way, else enqueues it.
template <typename Kind>
halError runCommand(halStream_t* stream, Kind command, const char* operation) {
    if (capturing(stream)) return captureCommand(stream, Command(std::move(command)), operation);
    return submitCommand(stream, command, operation);
}

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_COMMAND_RUNNER_HPP_
