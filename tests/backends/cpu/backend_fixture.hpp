// Access to the CPU backend's dispatch table for the unit tests, as the core sees it, plus small
// helpers for driving streams from tests.
#ifndef POLYHAL_TESTS_BACKENDS_CPU_BACKEND_FIXTURE_HPP_
#define POLYHAL_TESTS_BACKENDS_CPU_BACKEND_FIXTURE_HPP_

#include <polyhal/plugin.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace cpu_tests {

// The host services the tests pass to the backend: they keep the last error message.
const halPluginHost& testHost();
// The message the backend last set on this thread.
std::string lastError();

// The negotiated dispatch table, not yet initialised.
const halPluginDispatchTable& table();

// The dispatch table after a successful initialize, and device 0. The plugin ABI has no
// shutdown, so one initialisation serves the whole test process; tests that depend on the
// environment run in processes of their own (see CMakeLists.txt).
const halPluginDispatchTable& backend();
halPluginDevice device0();

// The bytes of a file, e.g. the test kernel module.
std::vector<unsigned char> readFile(const char* path);

// A latch that host functions wait on, so a test decides when a stream may proceed. A wait gives
// up after a long deadline, so a broken backend fails the test instead of hanging it. Tests
// synchronise the streams that wait on a gate before it goes out of scope.
class Gate {
  public:
    Gate() = default;
    // Opens the gate and waits for the host functions inside wait() to leave, so a test that
    // fails early does not leave a worker on a destroyed gate.
    ~Gate();
    Gate(const Gate&) = delete;
    Gate& operator=(const Gate&) = delete;

    void open();
    // Host function: waits for open(); a wait that times out is remembered.
    static void wait(void* gate);
    bool timedOut() const;

  private:
    mutable std::mutex mutex_;
    std::condition_variable opened_;
    std::condition_variable left_;
    bool open_ = false;
    bool timedOut_ = false;
    int waiting_ = 0;
};

// RAII owners of backend objects.
class Stream {
  public:
    explicit Stream(int priority = 0);
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    halPluginStream get() const { return stream_; }
    // Destroys it now (the destructor then does nothing).
    void destroy();

  private:
    halPluginStream stream_ = nullptr;
};

class Event {
  public:
    explicit Event(uint32_t flags = HAL_EVENT_DEFAULT);
    ~Event();
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    halPluginEvent get() const { return event_; }
    void destroy();

  private:
    halPluginEvent event_ = nullptr;
};

}  // namespace cpu_tests

#endif  // POLYHAL_TESTS_BACKENDS_CPU_BACKEND_FIXTURE_HPP_
