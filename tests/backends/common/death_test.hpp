// Runs a deliberately wrong call sequence in a child process and reports how the child ended and
// what it wrote to stderr: the negative tests of the drivers' doubles.
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_DEATH_TEST_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_DEATH_TEST_HPP_

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <string>
#include <thread>

namespace polyhal::doubles {

struct ChildOutcome {
    int exitCode = -1;  // when it exited
    int signal = 0;     // when a signal ended it
    std::string stderrText;
};

// The parent must not have started the double (no driver call before the fork): the child
// starts it afresh.
inline ChildOutcome runInChild(const std::function<void()>& body) {
    int pipeEnds[2];
    if (pipe(pipeEnds) != 0) return {};
    const pid_t child = fork();
    if (child == 0) {
        dup2(pipeEnds[1], STDERR_FILENO);
        close(pipeEnds[0]);
        // A fault or an abort ends the child by its signal, not through the test framework's
        // handler.
        std::signal(SIGSEGV, SIG_DFL);
        std::signal(SIGABRT, SIG_DFL);
        body();
        _exit(0);
    }
    close(pipeEnds[1]);
    ChildOutcome outcome;
    char buffer[4096];
    for (ssize_t n; (n = read(pipeEnds[0], buffer, sizeof buffer)) > 0;) {
        outcome.stderrText.append(buffer, static_cast<size_t>(n));
    }
    close(pipeEnds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFEXITED(status)) outcome.exitCode = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
    return outcome;
}

// Inside runInChild's body: ends the child with 0 once `count`, which another thread raises,
// has reached `expected` and stayed there a moment (a second raise would show), with 3 if it
// does not within 10 s or goes beyond.
[[noreturn]] inline void exitOnceCounted(const std::atomic<int>& count, int expected) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (count < expected && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    _exit(count == expected ? 0 : 3);
}

// For the rules between two processes, inside runInChild's body: forks a second process that
// runs `second`, which calls its argument at the point where it waits for the first; the child
// then runs `first` and lets the second go on, and ends as the second ended (a breach there is
// the outcome).
[[noreturn]] inline void runBesideSecondProcess(
    const std::function<void(const std::function<void()>& waitForFirst)>& second,
    const std::function<void()>& first) {
    int ready[2];
    int go[2];
    if (pipe(ready) != 0 || pipe(go) != 0) _exit(1);
    const pid_t peer = fork();
    if (peer == 0) {
        close(ready[0]);
        close(go[1]);
        second([&] {
            char byte = 0;
            if (write(ready[1], &byte, 1) != 1 || read(go[0], &byte, 1) != 1) _exit(1);
        });
        _exit(0);
    }
    close(ready[1]);
    close(go[0]);
    char byte = 0;
    if (read(ready[0], &byte, 1) == 1) {  // else the second ended early: its outcome stands
        first();
        if (write(go[1], &byte, 1) != 1) _exit(1);
    }
    int status = 0;
    waitpid(peer, &status, 0);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_DEATH_TEST_HPP_
