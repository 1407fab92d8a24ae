// Which file a trace goes to when several processes are given one path: POLYHAL_TRACE is
// inherited by the children a program starts, and each process must write a file of its own.
#ifndef POLYHAL_HAL_SRC_TRACE_TRACE_FILE_HPP_
#define POLYHAL_HAL_SRC_TRACE_TRACE_FILE_HPP_

#include <cstdint>
#include <string>

namespace polyhal::trace {

// `path` with each "%p" replaced by `pid`.
std::string expandPid(const std::string& path, int64_t pid);

// Opens the file for process `pid`'s trace, empty and locked for as long as it stays open, and
// sets `*chosen` to its path: `path` with "%p" expanded; where `path` has no "%p" and names a
// file another live process is tracing to, or `parentPath` (the trace the parent was writing
// when it forked this process), `path` with ".<pid>" appended. Returns the descriptor, or -1
// with errno set.
int openTraceFile(const std::string& path, const std::string& parentPath, int64_t pid,
                  std::string* chosen);

}  // namespace polyhal::trace

#endif  // POLYHAL_HAL_SRC_TRACE_TRACE_FILE_HPP_
