// Waiting for an event on the host with growing sleeps.
#include "engine/host_wait.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "symbols.hpp"

namespace polyhal::level_zero {

ze_result_t waitSleeping(ze_event_handle_t event) {
    constexpr std::chrono::microseconds kLongestPause{1000};
    std::chrono::microseconds pause{10};
    for (;;) {
        const ze_result_t status = ze.zeEventQueryStatus.address(event);
        if (status != ZE_RESULT_NOT_READY) return status;
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, kLongestPause);
    }
}

}  // namespace polyhal::level_zero
