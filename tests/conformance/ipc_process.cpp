#include "ipc_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

extern char** environ;

namespace cts::ipc {

bool send(int fd, const Message& message, std::string* error) {
    const auto* bytes = reinterpret_cast<const char*>(&message);
    size_t done = 0;
    while (done < sizeof message) {
        const ssize_t n = write(fd, bytes + done, sizeof message - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            *error = std::string("write to the pipe: ") + std::strerror(errno);
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

bool receive(int fd, Message* message, std::chrono::milliseconds timeout, std::string* error) {
    auto* bytes = reinterpret_cast<char*>(message);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    size_t done = 0;
    while (done < sizeof *message) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd ready = {fd, POLLIN, 0};
        const int polled = poll(&ready, 1, static_cast<int>(std::max<long>(0, left.count())));
        if (polled < 0 && errno == EINTR) continue;
        if (polled == 0) {
            *error = "no message from the other process within the time limit";
            return false;
        }
        const ssize_t n = read(fd, bytes + done, sizeof *message - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            *error = n == 0 ? "the other process closed the pipe (did it exit?)"
                            : std::string("read from the pipe: ") + std::strerror(errno);
            return false;
        }
        done += static_cast<size_t>(n);
    }
    message->what[sizeof message->what - 1] = 0;
    message->text[sizeof message->text - 1] = 0;
    return true;
}

Message makeMessage(const char* word, const std::string& text) {
    Message message;
    std::memset(&message, 0, sizeof message);
    std::strncpy(message.what, word, sizeof message.what - 1);
    std::strncpy(message.text, text.c_str(), sizeof message.text - 1);
    return message;
}

Child::Child(const char* role) {
    int down[2], up[2];
    if (pipe2(down, O_CLOEXEC) != 0) return;
    if (pipe2(up, O_CLOEXEC) != 0) {
        close(down[0]);
        close(down[1]);
        return;
    }
    // Prepared before fork: the child only calls async-signal-safe functions before exec.
    const std::string assignment = std::string(kChildVariable) + "=" + role + ":" +
                                   std::to_string(down[0]) + ":" + std::to_string(up[1]);
    char self[4096];
    const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0) return;
    self[length] = 0;
    std::vector<char*> environment;
    for (char** variable = environ; *variable != nullptr; ++variable) {
        environment.push_back(*variable);
    }
    environment.push_back(const_cast<char*>(assignment.c_str()));
    environment.push_back(nullptr);
    char* arguments[] = {self, nullptr};
    pid_ = fork();
    if (pid_ == 0) {
        // The child's ends must survive exec: clear close-on-exec on them only.
        fcntl(down[0], F_SETFD, 0);
        fcntl(up[1], F_SETFD, 0);
        execve(self, arguments, environment.data());
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    toChild_ = down[1];
    fromChild_ = up[0];
    if (pid_ < 0) {
        close(toChild_);
        close(fromChild_);
        toChild_ = fromChild_ = -1;
    }
}

Child::~Child() {
    if (toChild_ >= 0) close(toChild_);
    if (fromChild_ >= 0) close(fromChild_);
    if (pid_ > 0) {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, &status, 0);
        }
    }
}

int Child::wait(std::chrono::milliseconds timeout, std::string* error) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        int status = 0;
        const pid_t done = waitpid(pid_, &status, WNOHANG);
        if (done == pid_) {
            pid_ = -1;
            if (WIFEXITED(status)) return WEXITSTATUS(status);
            *error = "the child was killed by signal " + std::to_string(WTERMSIG(status));
            return -1;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            *error = "the child did not exit within the time limit";
            return -1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

}  // namespace cts::ipc
