#include "child_process.hpp"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace polyhal::test {
namespace {

std::vector<std::string> childEnvironment(const std::vector<std::string>& extra) {
    std::vector<std::string> entries;
    for (char** entry = environ; *entry != nullptr; ++entry) {
        if (std::strncmp(*entry, "POLYHAL_", 8) != 0) entries.emplace_back(*entry);
    }
    entries.insert(entries.end(), extra.begin(), extra.end());
    return entries;
}

class Pipe {
  public:
    Pipe() {
        if (pipe(fds_) != 0) throw std::runtime_error(std::string("pipe: ") + strerror(errno));
    }
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;
    ~Pipe() {
        closeRead();
        closeWrite();
    }
    int readEnd() const { return fds_[0]; }
    int writeEnd() const { return fds_[1]; }
    void closeRead() { closeEnd(0); }
    void closeWrite() { closeEnd(1); }

  private:
    void closeEnd(int end) {
        if (fds_[end] >= 0) close(fds_[end]);
        fds_[end] = -1;
    }
    int fds_[2] = {-1, -1};
};

// Reads both pipes until the child closes them or the deadline passes; false on timeout.
bool drain(Pipe& out, Pipe& err, ChildResult* result,
           std::chrono::steady_clock::time_point deadline) {
    struct Stream {
        Pipe* pipe;
        std::string* text;
    } streams[] = {{&out, &result->out}, {&err, &result->err}};
    while (out.readEnd() >= 0 || err.readEnd() >= 0) {
        pollfd fds[2];
        nfds_t count = 0;
        Stream* polled[2];
        for (auto& stream : streams) {
            if (stream.pipe->readEnd() < 0) continue;
            fds[count] = {stream.pipe->readEnd(), POLLIN, 0};
            polled[count++] = &stream;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        if (poll(fds, count, static_cast<int>(left.count())) < 0 && errno != EINTR) return false;
        for (nfds_t i = 0; i < count; ++i) {
            if (fds[i].revents == 0) continue;
            char buffer[4096];
            const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
            if (n > 0) {
                polled[i]->text->append(buffer, static_cast<size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                polled[i]->pipe->closeRead();
            }
        }
    }
    return true;
}

}  // namespace

ChildResult runChild(const std::string& program, const std::vector<std::string>& environment,
                     int timeoutSeconds) {
    Pipe out, err;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out.writeEnd(), STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err.writeEnd(), STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, out.readEnd());
    posix_spawn_file_actions_addclose(&actions, err.readEnd());

    std::vector<std::string> envStrings = childEnvironment(environment);
    std::vector<char*> envp;
    for (auto& entry : envStrings) envp.push_back(entry.data());
    envp.push_back(nullptr);
    std::string programCopy = program;
    char* argv[] = {programCopy.data(), nullptr};

    pid_t pid = -1;
    const int spawned = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
        throw std::runtime_error("posix_spawn " + program + ": " + strerror(spawned));
    }
    out.closeWrite();
    err.closeWrite();

    ChildResult result;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
    if (!drain(out, err, &result, deadline)) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.exitStatus = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

}  // namespace polyhal::test
