// Runs a program in a child process with a controlled environment and captures its output.
#ifndef POLYHAL_TESTS_PLUGINS_CHILD_PROCESS_HPP_
#define POLYHAL_TESTS_PLUGINS_CHILD_PROCESS_HPP_

#include <string>
#include <vector>

namespace polyhal::test {

struct ChildResult {
    int exitStatus = -1;  // the exit code, or -1 if the child did not exit normally
    std::string out;
    std::string err;
};

// Runs `program` with this process's environment minus every POLYHAL_* variable, plus
// `environment` ("NAME=value" entries). A child running longer than `timeoutSeconds` is killed.
ChildResult runChild(const std::string& program, const std::vector<std::string>& environment,
                     int timeoutSeconds = 60);

}  // namespace polyhal::test

#endif  // POLYHAL_TESTS_PLUGINS_CHILD_PROCESS_HPP_
