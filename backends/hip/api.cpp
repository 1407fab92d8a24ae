// The out-of-line parts of HipApi: host functions in stream order through stream callbacks.
#include <memory>
#include <new>

#include "api.hpp"

namespace polyhal::hip {

namespace {

// HIP 5.2 declares hipLaunchHostFunc but its runtime does not export it. A stream callback
// orders the same way (later work of the stream waits for it to return); it carries the
// function and its data, which it frees after the call. The callback runs exactly once, also
// when earlier work failed, and so does the function.
struct HostCall {
    halHostFn fn;
    void* userData;
};

void runHostCall(hipStream_t /*stream*/, hipError_t /*status*/, void* hostCall) noexcept {
    const std::unique_ptr<HostCall> owned(static_cast<HostCall*>(hostCall));
    owned->fn(owned->userData);
}

}  // namespace

halError HipApi::launchHostFunc(Stream stream, halHostFn fn, void* userData) noexcept {
    auto hostCall = std::unique_ptr<HostCall>(new (std::nothrow) HostCall{fn, userData});
    if (hostCall == nullptr) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "no host memory for a host function");
    }
    if (halError error =
            gpu::call<HipApi>(symbols.streamAddCallback, stream, runHostCall, hostCall.get(), 0u)) {
        return error;
    }
    hostCall.release();
    return HAL_SUCCESS;
}

}  // namespace polyhal::hip
