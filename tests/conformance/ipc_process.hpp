// Processes for the IPC tests: polyhal-cts starts itself again in a child role (selected by
// POLYHAL_CTS_IPC_CHILD, see main.cpp) and talks with it over two pipes, in fixed-size messages.
#ifndef POLYHAL_TESTS_CONFORMANCE_IPC_PROCESS_HPP_
#define POLYHAL_TESTS_CONFORMANCE_IPC_PROCESS_HPP_

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>

namespace cts::ipc {

// The environment variable that makes polyhal-cts run a child role: "<role>:<readFd>:<writeFd>".
constexpr const char* kChildVariable = "POLYHAL_CTS_IPC_CHILD";

// A message of either side: a word saying what it is, up to three handles, and a text (a size,
// or what failed).
struct Message {
    char what[16];
    unsigned char handles[3][128];
    char text[256];
};

// Writes or reads one whole message; false (with the reason in `error`) on failure or, for
// reads, after `timeout`.
bool send(int fd, const Message& message, std::string* error);
bool receive(int fd, Message* message, std::chrono::milliseconds timeout, std::string* error);

// A message whose `what` is `word` and `text` is `text`.
Message makeMessage(const char* word, const std::string& text = "");

// polyhal-cts running `role` in a child process, connected by pipes.
class Child {
  public:
    explicit Child(const char* role);
    ~Child();  // kills the child if it still runs
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    bool started() const { return pid_ > 0; }
    int toChild() const { return toChild_; }
    int fromChild() const { return fromChild_; }
    // Waits up to `timeout` for the child to exit; its exit status, or -1 (still running,
    // killed by a signal: `error` says which).
    int wait(std::chrono::milliseconds timeout, std::string* error);

  private:
    pid_t pid_ = -1;
    int toChild_ = -1;
    int fromChild_ = -1;
};

// main.cpp: runs the role named in POLYHAL_CTS_IPC_CHILD; returns the process's exit status.
int runChild(const char* assignment);

}  // namespace cts::ipc

#endif  // POLYHAL_TESTS_CONFORMANCE_IPC_PROCESS_HPP_
