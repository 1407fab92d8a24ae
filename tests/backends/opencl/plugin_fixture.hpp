// The OpenCL plugin loaded with dlopen, as the core loads it, and small owners for its objects.
#ifndef POLYHAL_TESTS_BACKENDS_OPENCL_PLUGIN_FIXTURE_HPP_
#define POLYHAL_TESTS_BACKENDS_OPENCL_PLUGIN_FIXTURE_HPP_

#include <CL/cl.h>
#include <polyhal/plugin.h>

#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace opencl_test {

// The plugin's table, negotiated once per process, before initialize.
const halPluginDispatchTable& negotiated();

// The plugin's table, negotiated and initialised once per process; device 0 opened.
const halPluginDispatchTable& plugin();
halPluginDevice device();

// The entry point itself, for negotiation tests.
halPluginEntryFn entryPoint();
const halPluginHost& testHost();

// The detail the plugin left with its last failure on this thread.
std::string lastError();

// The OpenCL device behind device(), found through a stream's native queue.
cl_device_id clDevice();

// The conformance kernels (backends/opencl/cts_kernels), loaded once on device(), and one of them.
halPluginModule ctsModule();
halPluginFunction ctsKernel(const char* name);

#define REQUIRE_OK(call)                                 \
    do {                                                 \
        const halError status_ = (call);                 \
        INFO(#call << ": " << opencl_test::lastError()); \
        REQUIRE(status_ == HAL_SUCCESS);                 \
    } while (0)

class Stream {
  public:
    explicit Stream(int priority = 0);
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    halPluginStream get() const { return handle_; }
    void synchronize() const;
    // Destroys the stream now; the owner then holds nothing.
    void destroy();

  private:
    halPluginStream handle_ = nullptr;
};

class Event {
  public:
    Event();
    ~Event();
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    halPluginEvent get() const { return handle_; }
    void destroy();

  private:
    halPluginEvent handle_ = nullptr;
};

class DeviceMemory {
  public:
    explicit DeviceMemory(size_t size);
    ~DeviceMemory();
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;
    void* get() const { return ptr_; }
    template <class T>
    T* as() const {
        return static_cast<T*>(ptr_);
    }

  private:
    void* ptr_ = nullptr;
};

// Copies `values` to device memory `dst` and waits.
template <class T>
void upload(const Stream& stream, void* dst, const std::vector<T>& values) {
    REQUIRE_OK(plugin().memcpyAsync(stream.get(), dst, values.data(), values.size() * sizeof(T),
                                    HAL_MEMCPY_HOST_TO_DEVICE));
    stream.synchronize();
}

// Copies `count` values from device memory `src` to the host and waits.
template <class T>
std::vector<T> download(const Stream& stream, const void* src, size_t count) {
    std::vector<T> values(count);
    REQUIRE_OK(plugin().memcpyAsync(stream.get(), values.data(), src, count * sizeof(T),
                                    HAL_MEMCPY_DEVICE_TO_HOST));
    stream.synchronize();
    return values;
}

// Holds streams back: block(stream) enqueues a host function that does not return until
// open(). The destructor opens the gate and waits until every blocked function has returned.
class Gate {
  public:
    Gate() = default;
    ~Gate();
    Gate(const Gate&) = delete;
    Gate& operator=(const Gate&) = delete;
    void block(const Stream& stream);
    void open();

  private:
    static void wait(void* gate);
    std::mutex mutex_;
    std::condition_variable changed_;
    bool open_ = false;
    int waiting_ = 0;  // host functions enqueued and not yet returned
};

}  // namespace opencl_test

#endif  // POLYHAL_TESTS_BACKENDS_OPENCL_PLUGIN_FIXTURE_HPP_
