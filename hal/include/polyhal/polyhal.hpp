// polyhal for C++: owning wrappers over <polyhal/hal.h>, header-only.
//
// Each class owns one polyhal object and releases it in its destructor; objects move, never
// copy. A failing call throws polyhal::Error, which carries the halError and polyhal's message
// for it. Everything is inline over the C ABI: nothing here adds a call, a lock or an
// allocation that the C calls would not make (Stream::launchHostFunc with a callable allocates
// the callable, as std::function would).
//
// Usage:
//     polyhal::Stream producer, consumer;
//     polyhal::Event ready;
//     polyhal::DeviceBuffer data(n * sizeof(float), producer);  // halMallocAsync on producer
//     polyhal::HostBuffer host(n * sizeof(float));                // page-locked
//     data.memset(0, producer);
//     ready.record(producer);
//     consumer.wait(ready);
//     polyhal::memcpy(host, data, HAL_MEMCPY_DEVICE_TO_HOST, consumer);
//     consumer.synchronize();
//
// Destructors never throw: a failure while releasing is dropped (polyhal's log says why), as a
// destructor has no one to report it to.
#ifndef POLYHAL_POLYHAL_HPP_
#define POLYHAL_POLYHAL_HPP_

#include <polyhal/hal.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace polyhal {

// A failed polyhal call: what() is "<operation>: <HAL_ERROR_NAME>: <polyhal's message>".
class Error : public std::runtime_error {
  public:
    Error(halError code, const char* operation)
        : std::runtime_error(std::string(operation) + ": " + halGetErrorName(code) + ": " +
                             halGetLastErrorMessage()),
          code_(code) {}
    halError code() const noexcept { return code_; }

  private:
    halError code_;
};

// Throws Error unless `result` is HAL_SUCCESS.
inline void check(halError result, const char* operation) {
    if (result != HAL_SUCCESS) throw Error(result, operation);
}

// For queries: true when done, false for HAL_ERROR_NOT_READY, throws for anything else.
inline bool checkReady(halError result, const char* operation) {
    if (result == HAL_ERROR_NOT_READY) return false;
    check(result, operation);
    return true;
}

// Owns a handle of type Handle, destroyed with Destroy; movable, not copyable.
template <class Handle, halError (*Destroy)(Handle)>
class UniqueHandle {
  public:
    UniqueHandle() = default;
    explicit UniqueHandle(Handle handle) noexcept : handle_(handle) {}
    UniqueHandle(UniqueHandle&& other) noexcept : handle_(other.release()) {}
    UniqueHandle& operator=(UniqueHandle&& other) noexcept {
        if (this != &other) reset(other.release());
        return *this;
    }
    UniqueHandle(const UniqueHandle&) = delete;
    UniqueHandle& operator=(const UniqueHandle&) = delete;
    ~UniqueHandle() { reset(); }

    Handle get() const noexcept { return handle_; }
    // Gives up ownership: the caller destroys the handle.
    Handle release() noexcept { return std::exchange(handle_, Handle{}); }
    void reset(Handle handle = Handle{}) noexcept {
        if (handle_ != Handle{}) Destroy(handle_);
        handle_ = handle;
    }

  private:
    Handle handle_{};
};

class Event;

// A stream of the current device (halCreateStream). Stream::defaultStream() names the device's
// default stream (NULL), which is never destroyed.
class Stream {
  public:
    Stream() : owner_(create(0, HAL_STREAM_DEFAULT, false)) {}
    explicit Stream(int priority, uint32_t flags = HAL_STREAM_DEFAULT)
        : owner_(create(priority, flags, true)) {}
    // Takes ownership of a stream made through the C API.
    static Stream adopt(halStream stream) noexcept { return Stream(stream); }
    // The default stream of the current device; destroying the wrapper destroys nothing.
    static Stream defaultStream() noexcept { return Stream(nullptr); }

    halStream get() const noexcept { return owner_.get(); }
    operator halStream() const noexcept { return get(); }

    void synchronize() const { check(halSynchronizeStream(get()), "halSynchronizeStream"); }
    // True when all submitted work has finished.
    bool query() const { return checkReady(halQueryStream(get()), "halQueryStream"); }
    // Later work of this stream waits for the work `event` captured.
    inline void wait(const Event& event) const;

    void launchHostFunc(halHostFn fn, void* userData) const {
        check(halLaunchHostFunc(get(), fn, userData), "halLaunchHostFunc");
    }
    // Runs `callable()` in stream order on a host thread. It must not throw (an exception there
    // would end the process: it cannot cross the C ABI) and, like any host function, may not
    // call into the device (hal.h).
    template <class Callable>
    void launchHostFunc(Callable callable) const {
        auto owned = std::make_unique<Callable>(std::move(callable));
        check(halLaunchHostFunc(get(), &Stream::runAndDelete<Callable>, owned.get()),
              "halLaunchHostFunc");
        owned.release();  // the host function deletes it after running it
    }

  private:
    explicit Stream(halStream stream) noexcept : owner_(stream) {}
    static halStream create(int priority, uint32_t flags, bool configured) {
        halStream stream = nullptr;
        if (configured) {
            check(halCreateStreamWithConfig(&stream, priority, flags), "halCreateStreamWithConfig");
        } else {
            check(halCreateStream(&stream), "halCreateStream");
        }
        return stream;
    }

    template <class Callable>
    static void runAndDelete(void* userData) noexcept {
        std::unique_ptr<Callable> callable(static_cast<Callable*>(userData));
        (*callable)();
    }

    UniqueHandle<halStream, halDestroyStream> owner_;
};

// An event of the current device (halCreateEventWithFlag).
class Event {
  public:
    explicit Event(uint32_t flags = HAL_EVENT_DEFAULT) {
        halEvent event = nullptr;
        check(halCreateEventWithFlag(&event, flags), "halCreateEventWithFlag");
        owner_.reset(event);
    }

    halEvent get() const noexcept { return owner_.get(); }
    operator halEvent() const noexcept { return get(); }

    void record(halStream stream) const { check(halRecordEvent(get(), stream), "halRecordEvent"); }
    void synchronize() const { check(halSynchronizeEvent(get()), "halSynchronizeEvent"); }
    // True when the captured work has finished (or the event was never recorded).
    bool query() const { return checkReady(halQueryEvent(get()), "halQueryEvent"); }
    // Milliseconds from `start` to `end`, both recorded and complete.
    static float elapsedMs(const Event& start, const Event& end) {
        float ms = 0.0f;
        check(halEventElapsedTime(&ms, start.get(), end.get()), "halEventElapsedTime");
        return ms;
    }

  private:
    UniqueHandle<halEvent, halDestroyEvent> owner_;
};

inline void Stream::wait(const Event& event) const {
    check(halStreamWaitEvent(get(), event.get()), "halStreamWaitEvent");
}

// A graph: the work submitted to a stream between Graph::beginCapture and Graph::endCapture,
// launched any number of times on any stream of its device (hal.h, "Graphs"). A host function
// launched with a callable (Stream::launchHostFunc(Callable)) must not be captured: the callable
// is deleted after its first run. Capture the function-pointer form, with user data that
// outlives the graph.
class Graph {
  public:
    static void beginCapture(halStream stream, halCaptureMode mode = HAL_CAPTURE_MODE_GLOBAL) {
        check(halStreamBeginCapture(stream, mode), "halStreamBeginCapture");
    }
    static Graph endCapture(halStream stream) {
        halGraph graph = nullptr;
        check(halStreamEndCapture(stream, &graph), "halStreamEndCapture");
        return Graph(graph);
    }
    // The capture status of `stream`.
    static halCaptureStatus captureStatus(halStream stream) {
        halCaptureStatus status = HAL_CAPTURE_STATUS_NONE;
        check(halStreamGetCaptureInfo(stream, &status), "halStreamGetCaptureInfo");
        return status;
    }

    halGraph get() const noexcept { return owner_.get(); }
    operator halGraph() const noexcept { return get(); }

    void launch(halStream stream) const { check(halGraphLaunch(get(), stream), "halGraphLaunch"); }

  private:
    explicit Graph(halGraph graph) noexcept : owner_(graph) {}

    UniqueHandle<halGraph, halGraphDestroy> owner_;
};

// Device memory of the current device from its pool: halMalloc/halFree, or, given a stream,
// halMallocAsync/halFreeAsync in that stream's order (the stream must outlive the buffer).
class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t size) : size_(size) {
        check(halMalloc(&data_, size), "halMalloc");
    }
    DeviceBuffer(size_t size, halStream stream) : size_(size), stream_(stream), ordered_(true) {
        check(halMallocAsync(&data_, size, stream), "halMallocAsync");
    }
    DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        DeviceBuffer(std::move(other)).swap(*this);
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() {
        if (data_ == nullptr) return;
        if (ordered_) {
            halFreeAsync(data_, stream_);
        } else {
            halFree(data_);
        }
    }

    void* data() const noexcept { return data_; }
    size_t size() const noexcept { return size_; }
    template <class T>
    T* as() const noexcept {
        return static_cast<T*>(data_);
    }

    // Sets every byte to `value` in the order of `stream`.
    void memset(int value, halStream stream) const {
        check(halMemsetAsync(data_, size_, value, size_, stream), "halMemsetAsync");
    }

    void swap(DeviceBuffer& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
        std::swap(stream_, other.stream_);
        std::swap(ordered_, other.ordered_);
    }

  private:
    void* data_ = nullptr;
    size_t size_ = 0;
    halStream stream_ = nullptr;
    bool ordered_ = false;
};

// Page-locked host memory (halMallocHost), for copies that overlap other work.
class HostBuffer {
  public:
    HostBuffer() = default;
    explicit HostBuffer(size_t size) : size_(size) {
        check(halMallocHost(&data_, size), "halMallocHost");
    }
    HostBuffer(HostBuffer&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
    HostBuffer& operator=(HostBuffer&& other) noexcept {
        HostBuffer(std::move(other)).swap(*this);
        return *this;
    }
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;
    ~HostBuffer() {
        if (data_ != nullptr) halFreeHost(data_);
    }

    void* data() const noexcept { return data_; }
    size_t size() const noexcept { return size_; }
    template <class T>
    T* as() const noexcept {
        return static_cast<T*>(data_);
    }

    void swap(HostBuffer& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
    }

  private:
    void* data_ = nullptr;
    size_t size_ = 0;
};

// Copies all of `src` into `dst` (dst.size() bounds it, as dstMax) in the order of `stream`.
template <class Dst, class Src>
void memcpy(const Dst& dst, const Src& src, halMemcpyKind kind, halStream stream) {
    check(halMemcpyAsync(dst.data(), dst.size(), src.data(), src.size(), kind, stream),
          "halMemcpyAsync");
}

// A kernel of a loaded Module; valid while the module is loaded.
class Function {
  public:
    explicit Function(halFunction function) noexcept : function_(function) {}
    halFunction get() const noexcept { return function_; }

    // Launches with each argument passed by value, as the kernel declares it: pass exactly the
    // parameter types (uint32_t, not int, for a uint32_t parameter).
    template <class... Args>
    void launch(halDim3 grid, halDim3 block, halStream stream, const Args&... args) const {
        launchWithSharedMemory(grid, block, 0, stream, args...);
    }
    template <class... Args>
    void launchWithSharedMemory(halDim3 grid, halDim3 block, size_t dynamicSharedBytes,
                                halStream stream, const Args&... args) const {
        const halKernelArg packed[sizeof...(Args) + 1] = {{&args, sizeof(Args)}..., {nullptr, 0}};
        check(halLaunchKernel(function_, grid, block, dynamicSharedBytes, packed,
                              static_cast<uint32_t>(sizeof...(Args)), stream),
              "halLaunchKernel");
    }
    // As launch, with how the kernel uses the memory each argument points to, one entry per
    // argument (halLaunchKernelWithAccess; checked mode's race detector and the pool read it).
    template <class... Args>
    void launchWithAccess(halDim3 grid, halDim3 block, halStream stream,
                          const halKernelArgAccess (&access)[sizeof...(Args)],
                          const Args&... args) const {
        const halKernelArg packed[sizeof...(Args)] = {{&args, sizeof(Args)}...};
        check(halLaunchKernelWithAccess(function_, grid, block, 0, packed, access,
                                        static_cast<uint32_t>(sizeof...(Args)), stream),
              "halLaunchKernelWithAccess");
    }
    // As launchWithAccess, with how many bytes from each pointer the kernel may touch as well
    // (halLaunchKernelWithUses): kernels on several streams that each work on their own slice of
    // one buffer are then not reported as racing.
    template <class... Args>
    void launchWithUses(halDim3 grid, halDim3 block, halStream stream,
                        const halKernelArgUse (&uses)[sizeof...(Args)], const Args&... args) const {
        const halKernelArg packed[sizeof...(Args)] = {{&args, sizeof(Args)}...};
        check(halLaunchKernelWithUses(function_, grid, block, 0, packed, uses,
                                      static_cast<uint32_t>(sizeof...(Args)), stream),
              "halLaunchKernelWithUses");
    }

  private:
    halFunction function_;
};

// A module loaded on the current device from a file or an in-memory image.
class Module {
  public:
    explicit Module(const std::string& path) {
        halModule module = nullptr;
        check(halModuleLoadFile(&module, path.c_str()), "halModuleLoadFile");
        owner_.reset(module);
    }
    Module(const void* image, size_t size) {
        halModule module = nullptr;
        check(halModuleLoadData(&module, image, size), "halModuleLoadData");
        owner_.reset(module);
    }

    halModule get() const noexcept { return owner_.get(); }
    Function function(const char* name) const {
        halFunction function = nullptr;
        check(halModuleGetFunction(&function, get(), name), "halModuleGetFunction");
        return Function(function);
    }

  private:
    UniqueHandle<halModule, halModuleUnload> owner_;
};

// A named range on the calling thread's trace track for the object's lifetime
// (halTraceRangePush / halTraceRangePop), as NVTX's scoped ranges:
//     { polyhal::TraceRange step("step"); ... }
class TraceRange {
  public:
    explicit TraceRange(const char* name) { check(halTraceRangePush(name), "halTraceRangePush"); }
    ~TraceRange() { halTraceRangePop(); }
    TraceRange(const TraceRange&) = delete;
    TraceRange& operator=(const TraceRange&) = delete;
};

}  // namespace polyhal

#endif  // POLYHAL_POLYHAL_HPP_
