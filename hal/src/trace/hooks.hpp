// Where the core tells the trace what happens: the span of each public call, the stream
// operations it enqueues, the flows between them and the pool's counters. Every hook costs one
// predictable branch while no trace is written; the work is out of line (hooks.cpp, tracks.cpp,
// device_spans.cpp, pool_counters.cpp).
#ifndef POLYHAL_HAL_SRC_TRACE_HOOKS_HPP_
#define POLYHAL_HAL_SRC_TRACE_HOOKS_HPP_

#include <polyhal/hal.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "recorder.hpp"

struct halStream_t;
struct halEvent_t;
struct halFunction_t;

namespace polyhal {
struct Device;
}  // namespace polyhal

namespace polyhal::trace {

// The public call running on the calling thread while a trace is written: what its span will
// say once it ends.
struct Call {
    const char* function;
    uint64_t start;
    uint64_t session;
    const char* stream = nullptr;  // the stream's track label
    int64_t bytes = -1;
    const char* kernel = nullptr;
    Device* poolDevice = nullptr;  // whose pool counters to sample when the call ends
    int64_t trimKeep = -1;         // halMemPoolTrim's bytesToKeep
    uint64_t reservedBefore = 0;
    Call* outer = nullptr;
};

Call* currentCall() noexcept;

// The span of one public call (apiCall). It starts closed, costing one flag while no trace is
// written; open() makes it the calling thread's call, and finish() writes it.
class CallSpan {
  public:
    CallSpan() noexcept {}
    CallSpan(const CallSpan&) = delete;
    CallSpan& operator=(const CallSpan&) = delete;

    void open(const char* function) noexcept;
    // Writes the span, if open, with the call's `result`; returns `result`.
    halError finish(halError result) noexcept {
        if (__builtin_expect(open_, 0)) close(result);
        return result;
    }

  private:
    void close(halError result) noexcept;

    // Filled by open() only: a call that writes no trace spends nothing on it.
    union {
        Call call_;
    };
    bool open_ = false;
};

struct Timing;

namespace slow {
void noteStream(const halStream_t* stream) noexcept;
void noteKernel(const halFunction_t* function) noexcept;
void notePool(Device* device) noexcept;
void poolTrimming(Device* device, size_t bytesToKeep) noexcept;
Timing* beforeSubmit(halStream_t* stream) noexcept;
void submitted(halStream_t* stream, const char* operation, Timing* timing) noexcept;
void abandon(Timing* timing) noexcept;
void streamFailed(const halStream_t* stream, const std::string& message) noexcept;
void eventRecorded(const halEvent_t* event) noexcept;
void eventAwaited(const halEvent_t* event) noexcept;
void streamSynchronized(const halStream_t* stream) noexcept;
void deviceSynchronized(const Device* device) noexcept;
uint64_t hostFunctionLaunched() noexcept;
}  // namespace slow

// The call's stream (its span's "stream" argument; resolveStream calls it). Its device's pool is
// sampled when the call ends, as notePool() does.
inline void noteStream(const halStream_t* stream) noexcept {
    if (enabled()) slow::noteStream(stream);
}

// The call's size in bytes (allocation, copy or fill).
inline void noteBytes(size_t bytes) noexcept {
    if (enabled()) {
        if (Call* call = currentCall()) call->bytes = static_cast<int64_t>(bytes);
    }
}

// The kernel the call launches: its name names the device span.
inline void noteKernel(const halFunction_t* function) noexcept {
    if (enabled()) slow::noteKernel(function);
}

// The call may have changed `device`'s pool: its counters are sampled when the call ends (a
// record where they changed), with markers for out-of-memory synchronisations and segments
// released meanwhile. Calls with a stream need not say so (noteStream).
inline void notePool(Device* device) noexcept {
    if (enabled()) slow::notePool(device);
}

// halMemPoolTrim is about to trim `device`'s pool: a marker says how much it released.
inline void poolTrimming(Device* device, size_t bytesToKeep) noexcept {
    if (enabled()) slow::poolTrimming(device, bytesToKeep);
}

// An operation is about to be enqueued on `stream`: where the backend runs host functions, one
// enqueued now notes when the stream reaches the operation. Returns what submitted() or
// abandon() takes, nullptr while no trace is written.
inline Timing* beforeSubmit(halStream_t* stream) noexcept {
    return enabled() ? slow::beforeSubmit(stream) : nullptr;
}

// The backend accepted `operation` on `stream`: one host function enqueued behind it notes its
// completion, and writes its device span (start to completion, and its latency from the call
// that submitted it to its start).
inline void submitted(halStream_t* stream, const char* operation, Timing* timing) noexcept {
    if (timing != nullptr) slow::submitted(stream, operation, timing);
}

// The backend refused the operation beforeSubmit() was called for.
inline void abandon(Timing* timing) noexcept {
    if (timing != nullptr) slow::abandon(timing);
}

// `event` was just recorded by the calling thread's call: the point later waits flow from.
// A call found an asynchronous failure of `stream`'s work (`message`, as the call reports it):
// the trace marks it on the stream's track, at the end of its latest kernel's span.
inline void streamFailed(const halStream_t* stream, const std::string& message) noexcept {
    if (enabled()) slow::streamFailed(stream, message);
}

inline void eventRecorded(const halEvent_t* event) noexcept {
    if (enabled()) slow::eventRecorded(event);
}

// The calling thread's call waited for `event` (halStreamWaitEvent, halSynchronizeEvent): a
// flow from the record that it waited for.
inline void eventAwaited(const halEvent_t* event) noexcept {
    if (enabled()) slow::eventAwaited(event);
}

// The calling thread waited for `stream` (or all streams of `device`): flows from the last
// device span of each awaited stream.
inline void streamSynchronized(const halStream_t* stream) noexcept {
    if (enabled()) slow::streamSynchronized(stream);
}
inline void deviceSynchronized(const Device* device) noexcept {
    if (enabled()) slow::deviceSynchronized(device);
}

// A host function is being launched by the calling thread's call: the id of the flow to its
// run, 0 while no trace is written.
inline uint64_t hostFunctionLaunched() noexcept {
    return enabled() ? slow::hostFunctionLaunched() : 0;
}

// The host function of flow `flow` (0: none) ran on the calling thread from `start` to `end`.
void hostFunctionRan(uint64_t flow, uint64_t session, uint64_t start, uint64_t end) noexcept;

// Forgets a destroyed handle's track or record point, so that a new handle at its address
// starts afresh. Cheap while nothing was ever traced.
void streamDestroyed(const halStream_t* stream) noexcept;
void eventDestroyed(const halEvent_t* event) noexcept;

}  // namespace polyhal::trace

#endif  // POLYHAL_HAL_SRC_TRACE_HOOKS_HPP_
