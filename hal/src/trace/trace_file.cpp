#include "trace_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace polyhal::trace {

namespace {

constexpr char kPidPattern[] = "%p";

// Opens `path` for writing and, where it is a regular file, takes its exclusive lock without
// waiting and empties it; the lock goes with the file's last descriptor, so a process that dies
// leaves the file free. -1 with errno EWOULDBLOCK where another process holds it. Anything else
// (/dev/null, a pipe) is written as it is: several processes may share it.
int openLocked(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    struct stat status;
    if (::fstat(fd, &status) == 0 && !S_ISREG(status.st_mode)) return fd;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || ::ftruncate(fd, 0) != 0) {
        const int error = errno;
        ::close(fd);
        errno = error;
        return -1;
    }
    return fd;
}

}  // namespace

std::string expandPid(const std::string& path, int64_t pid) {
    std::string expanded;
    const std::string text = std::to_string(pid);
    for (size_t at = 0; at < path.size();) {
        if (path.compare(at, sizeof kPidPattern - 1, kPidPattern) == 0) {
            expanded += text;
            at += sizeof kPidPattern - 1;
        } else {
            expanded += path[at++];
        }
    }
    return expanded;
}

int openTraceFile(const std::string& path, const std::string& parentPath, int64_t pid,
                  std::string* chosen) {
    *chosen = expandPid(path, pid);
    if (*chosen == path && path != parentPath) {
        const int fd = openLocked(path);
        if (fd >= 0 || errno != EWOULDBLOCK) return fd;
    }
    if (*chosen == path) *chosen = path + "." + std::to_string(pid);
    return openLocked(*chosen);
}

}  // namespace polyhal::trace
