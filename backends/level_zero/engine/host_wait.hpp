// Waiting for an event on the host without occupying a core.
//
// zeEventHostSynchronize busy-waits on Intel's driver: right for short waits of latency-bound
// code, wrong for HAL_EVENT_BLOCKING_SYNC events (which promise to sleep) and for threads that
// may wait for long, such as a stream's host-function thread.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_HOST_WAIT_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_HOST_WAIT_HPP_

#include <level_zero/ze_api.h>

namespace polyhal::level_zero {

// Polls `event` with sleeps growing from 10 us to 1 ms until it has signalled. Returns what the
// last zeEventQueryStatus returned (ZE_RESULT_SUCCESS, or the failure that ended the wait).
ze_result_t waitSleeping(ze_event_handle_t event);

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_HOST_WAIT_HPP_
