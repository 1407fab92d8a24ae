// Implements command_runner.hpp.
#include "command_runner.hpp"

#include <vector>

#include "graph/capture.hpp"
#include "stream_ops.hpp"

namespace polyhal {

halError runCommand(halStream_t* stream, Command command, const char* operation) {
    if (capturing(stream)) return captureCommand(stream, std::move(command), operation);
    return submitCommand(stream, command, operation);
}

halError submitCommand(halStream_t* stream, const Command& command, const char* operation) {
    // Room on the stack for the accesses of every command but a kernel with many pointers.
    constexpr size_t kInline = 16;
    check::Access inlineAccesses[kInline];
    std::vector<check::Access> manyAccesses;
    check::Access* accesses = inlineAccesses;
    const size_t most = maxAccesses(command);
    if (most > kInline) {
        manyAccesses.resize(most);
        accesses = manyAccesses.data();
    }
    const size_t count = writeAccesses(command, accesses);
    return submit(stream, operation, accesses, count,
                  [&] { return enqueueCommand(command, stream); });
}

}  // namespace polyhal
