// What every public function shares: the exception barrier, initialisation, handle resolution
// and plugin-error adoption.
#ifndef POLYHAL_HAL_SRC_API_HPP_
#define POLYHAL_HAL_SRC_API_HPP_

#include <polyhal/hal.h>

#include <exception>
#include <new>

#include "call_gate.hpp"
#include "check/hooks.hpp"
#include "enum_bits.hpp"
#include "error.hpp"
#include "graph/capture_mode.hpp"
#include "host_function.hpp"
#include "runtime.hpp"
#include "trace/hooks.hpp"

namespace polyhal {

// What hal.h lets a public function do where the device must not be reached. Each public function
// declares its own where it calls apiCall, next to its hal.h entry's "Allowed in host functions"
// and capture rules.
enum class CallPolicy : unsigned char {
    // Reaches the device (enqueues, or asks the plugin): refused inside a host function; allowed
    // during a capture, which records or refuses it itself.
    kReachesDevice,
    // Never reaches the device: allowed inside a host function and during any capture.
    kHostOnly,
    // What hal.h's halCaptureMode names unsafe: may wait for the device (synchronises, allocates
    // or frees synchronously) or asks whether its work is done (as CUDA's global mode refuses
    // cudaStreamQuery and cudaEventQuery). Refused inside a host function, and by a global or
    // thread-local capture under way, which it invalidates.
    kWaitsForDevice,
};

// The careful path of a call while call_gate says a reason holds (api.cpp): initialises, refuses
// what `policy` does not allow inside a host function or during a capture, and opens the call's
// span while a trace is written. HAL_SUCCESS when the body may run.
halError admitCall(const char* function, CallPolicy policy, trace::CallSpan& span);

// Runs a public function's body: takes the careful path first while any reason holds (call_gate),
// and turns any exception into an error so none crosses the C ABI. `function` is the public
// function calling it (its __func__). Inlined into the public function, as is the body at its one
// call site: a call is the public function's own code, with no frame between it and the plugin.
template <typename Body>
[[gnu::always_inline]] inline halError apiCall(const char* function, CallPolicy policy,
                                               Body&& body) noexcept {
    trace::CallSpan span;
    try {
        if (!call_gate::clear()) {
            if (halError e = admitCall(function, policy, span)) return e;
        }
        return span.finish(body());
    } catch (const std::bad_alloc&) {
        return span.finish(fail(HAL_ERROR_OUT_OF_MEMORY, "out of host memory"));
    } catch (const std::exception& e) {
        return span.finish(fail(HAL_ERROR_UNKNOWN, "internal error: {}", e.what()));
    } catch (...) {
        return span.finish(fail(HAL_ERROR_UNKNOWN, "internal error: unknown exception"));
    }
}

// Adopts a failing plugin result as the thread's error; passes success through.
inline halError checked(halError status, const Device* device, const char* operation) {
    if (__builtin_expect(status == HAL_SUCCESS, 1)) return HAL_SUCCESS;
    if (status == HAL_ERROR_NOT_READY) return status;
    return adoptPluginError(status, device->backend->name.c_str(), operation);
}

// The default stream of `device`, created on first use with the pool's clock for it
// (stream_ops.cpp).
halError defaultStream(Device* device, halStream_t** stream);
// Destroys the default stream (halResetDevice); the next use makes a new one. No other thread may
// use the device meanwhile.
void releaseDefaultStream(Device* device);

// A stream handle (NULL: the current device's default stream) as the core's object.
inline halError resolveStream(halStream handle, halStream_t** stream, const char* operation) {
    if (handle == nullptr) {
        const halError status = defaultStream(currentDevice(), stream);
        if (status == HAL_SUCCESS) trace::noteStream(*stream);
        return status;
    }
    halStream_t* object = runtime().streams.validate(handle);
    if (__builtin_expect(object == nullptr, 0)) {
        return fail(HAL_ERROR_INVALID_HANDLE,
                    "{}: stream {} is not a live stream (destroyed, or not made by "
                    "halCreateStream)",
                    operation, static_cast<const void*>(handle));
    }
    *stream = object;
    trace::noteStream(object);
    return HAL_SUCCESS;
}

inline halError resolveEvent(halEvent handle, halEvent_t** event, const char* operation) {
    halEvent_t* object = runtime().events.validate(handle);
    if (__builtin_expect(object == nullptr, 0)) {
        return fail(HAL_ERROR_INVALID_HANDLE,
                    "{}: event {} is not a live event (NULL, destroyed, or not made by "
                    "halCreateEvent)",
                    operation, static_cast<const void*>(handle));
    }
    *event = object;
    return HAL_SUCCESS;
}

// The handle for `native`, a plugin event of `device` just made; destroys `native` where no
// handle is left.
halError makeEventHandle(Device* device, halPluginEvent native, uint32_t flags,
                         const char* operation, halEvent* event);

// Withdraws every peer access granted to `device` (halResetDevice).
void revokePeerAccess(Device* device);

inline halError requireDevice(int device, const char* operation) {
    const int count = static_cast<int>(runtime().devices.size());
    if (device >= 0 && device < count) return HAL_SUCCESS;
    return fail(HAL_ERROR_INVALID_DEVICE, "{}: device {} does not exist ({} device{})", operation,
                device, count, count == 1 ? "" : "s");
}

inline halError requireOutput(const void* pointer, const char* operation, const char* name) {
    if (pointer != nullptr) return HAL_SUCCESS;
    return fail(HAL_ERROR_INVALID_VALUE, "{}: {} must not be NULL", operation, name);
}

// A public function that only reads a host-side value: refuses a NULL `out` (named `name` in the
// message), then stores `value()` there.
template <typename T, typename Value>
halError hostGetter(const char* function, T* out, const char* name, Value&& value) noexcept {
    return apiCall(function, CallPolicy::kHostOnly, [&] {
        if (halError e = requireOutput(out, function, name)) return e;
        *out = value();
        return HAL_SUCCESS;
    });
}

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_API_HPP_
