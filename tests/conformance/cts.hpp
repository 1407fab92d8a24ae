// Shared helpers of the conformance suite: result checks that print polyhal's error detail,
// capability-based skips, owning wrappers for handles and memory, and a gate that holds a stream
// until the test opens it. Everything here uses only the public API <polyhal/hal.h>.
#ifndef POLYHAL_TESTS_CONFORMANCE_CTS_HPP_
#define POLYHAL_TESTS_CONFORMANCE_CTS_HPP_

#include <polyhal/hal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstddef>
#include <string>
#include <thread>

namespace Catch {
template <>
struct StringMaker<halError> {
    static std::string convert(halError error) { return halGetErrorName(error); }
};
}  // namespace Catch

namespace cts {

// How long any wait in the suite may take before the test fails instead of hanging.
constexpr std::chrono::seconds kTimeout{10};

// "HAL_ERROR_X: <this thread's last error message>" (read before any other polyhal call, since
// the message is only valid until then).
std::string describe(halError error);

// Requires `call` to return HAL_SUCCESS; on failure the report shows the error and its message.
#define HAL_REQUIRE_OK(call)                                   \
    do {                                                       \
        const halError cts_result_ = (call);                   \
        INFO(#call << " -> " << ::cts::describe(cts_result_)); \
        REQUIRE(cts_result_ == HAL_SUCCESS);                   \
    } while (0)

#define HAL_CHECK_OK(call)                                     \
    do {                                                       \
        const halError cts_result_ = (call);                   \
        INFO(#call << " -> " << ::cts::describe(cts_result_)); \
        CHECK(cts_result_ == HAL_SUCCESS);                     \
    } while (0)

// The current device's properties.
halDeviceProperties deviceProperties();

// Backend name of the current device.
std::string backendName();

// True, after printing "skipped: ..." with the reason, when the current device lacks
// `capability`.
bool lacksCapability(uint64_t capability, const char* capabilityName);

// Ends the test (as a skip with its reason printed) when the current device lacks `capability`.
#define CTS_REQUIRE_CAPABILITY(capability)                             \
    do {                                                               \
        if (::cts::lacksCapability((capability), #capability)) return; \
    } while (0)

// Reports a skip with its reason; the caller returns afterwards.
void skip(const std::string& reason);

// Polls `done` until it is true or `timeout` passes; returns its last value.
template <typename Predicate>
bool waitUntil(Predicate done, std::chrono::milliseconds timeout = kTimeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= deadline) return done();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
}

// A host function that holds its stream until the test calls open(). It gives up after
// kTimeout, so a backend that never runs the opening work fails the test instead of hanging it.
// The destructor opens the gate and waits for the host function to finish.
//
// What a held stream guarantees to the others: work submitted to other streams before the hold
// runs. Cases tagged [independent_streams] also expect work submitted to another stream after the
// hold to run while it holds, which GPUs guarantee only while each live stream has a hardware
// queue of its own: CUDA multiplexes streams onto CUDA_DEVICE_MAX_CONNECTIONS queues (8 by
// default), ROCm onto GPU_MAX_HW_QUEUES per priority (4), and a stream waiting in a host
// function holds every stream of its queue. The runs with fewer hardware queues than streams
// (cts.cuda_double.shared_queues, cts.hip_double.shared_queues) leave those cases out.
class Gate {
  public:
    Gate() = default;
    Gate(const Gate&) = delete;
    Gate& operator=(const Gate&) = delete;
    ~Gate();

    // Enqueues the holding host function on `stream`.
    void enqueue(halStream stream);
    void open() { open_.store(true); }
    bool entered() const { return entered_.load(); }
    bool finished() const { return finished_.load(); }
    // Did the host function give up waiting for open()?
    bool timedOut() const { return timedOut_.load(); }

  private:
    static void hold(void* gate);

    std::atomic<bool> open_{false};
    std::atomic<bool> enqueued_{false};
    std::atomic<bool> entered_{false};
    std::atomic<bool> finished_{false};
    std::atomic<bool> timedOut_{false};
};

// Enqueues a host function that sleeps for `duration`.
void enqueueSleep(halStream stream, std::chrono::milliseconds duration);

// Enqueues a host function that sets `flag` to true.
void enqueueSet(halStream stream, std::atomic<bool>* flag);

// Owning wrappers. Construction requires success; destruction ignores errors, because a test may
// already have destroyed the object through the API (or reset its device) on purpose.
class Stream {
  public:
    Stream();
    Stream(int priority, uint32_t flags);
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream() { halDestroyStream(stream_); }
    halStream get() const { return stream_; }
    operator halStream() const { return stream_; }

  private:
    halStream stream_ = nullptr;
};

class Event {
  public:
    explicit Event(uint32_t flags = HAL_EVENT_DEFAULT);
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    ~Event() { halDestroyEvent(event_); }
    halEvent get() const { return event_; }
    operator halEvent() const { return event_; }

  private:
    halEvent event_ = nullptr;
};

class DeviceMemory {
  public:
    explicit DeviceMemory(size_t bytes);
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;
    ~DeviceMemory() { halFree(ptr_); }
    template <typename T = void>
    T* get() const {
        return static_cast<T*>(ptr_);
    }
    size_t size() const { return size_; }

  private:
    void* ptr_ = nullptr;
    size_t size_;
};

class HostMemory {
  public:
    explicit HostMemory(size_t bytes);
    HostMemory(const HostMemory&) = delete;
    HostMemory& operator=(const HostMemory&) = delete;
    ~HostMemory() { halFreeHost(ptr_); }
    template <typename T = void>
    T* get() const {
        return static_cast<T*>(ptr_);
    }
    size_t size() const { return size_; }

  private:
    void* ptr_ = nullptr;
    size_t size_;
};

class Module {
  public:
    Module() = default;
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;
    ~Module() {
        if (module_ != nullptr) halModuleUnload(module_);
    }
    halModule* out() { return &module_; }
    halModule get() const { return module_; }
    // Gives up ownership: the caller unloads the module.
    halModule release() {
        const halModule module = module_;
        module_ = nullptr;
        return module;
    }

  private:
    halModule module_ = nullptr;
};

}  // namespace cts

#endif  // POLYHAL_TESTS_CONFORMANCE_CTS_HPP_
