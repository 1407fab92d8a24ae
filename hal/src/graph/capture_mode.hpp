// What a capture's mode forbids while it is under way (hal.h, halCaptureMode): asked by every
// public call that may wait for the device (CallPolicy::kWaitsForDevice), at the cost of one
// relaxed load while no capture is under way.
#ifndef POLYHAL_HAL_SRC_GRAPH_CAPTURE_MODE_HPP_
#define POLYHAL_HAL_SRC_GRAPH_CAPTURE_MODE_HPP_

#include <polyhal/hal.h>

#include <atomic>

namespace polyhal {

namespace detail {
// How many captures are under way in the process.
extern std::atomic<int> activeCaptures;
halError checkPermittedDuringCaptureSlow(const char* function);
}  // namespace detail

// HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED where the mode of a capture under way forbids a call that
// may wait for the device on the calling thread, invalidating that capture; otherwise
// HAL_SUCCESS. `function` names the public function for the message.
inline halError checkPermittedDuringCapture(const char* function) {
    if (__builtin_expect(detail::activeCaptures.load(std::memory_order_relaxed) == 0, 1)) {
        return HAL_SUCCESS;
    }
    return detail::checkPermittedDuringCaptureSlow(function);
}

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_GRAPH_CAPTURE_MODE_HPP_
