// The api checks: misuse the default path does not look for, or refuses without saying more.
#include "../objects.hpp"
#include "findings.hpp"
#include "hooks.hpp"

namespace polyhal::check::slow {

void awaiting(const halEvent_t* event, const char* operation) noexcept {
    if (event->recorded.load(std::memory_order_acquire) ||
        (event->flags & HAL_EVENT_INTERPROCESS) != 0) {
        return;
    }
    try {
        report("api", fmt::format("{} waits for event {}, which was never recorded: the wait "
                                  "orders nothing (record the event first)\n{}",
                                  operation, static_cast<const void*>(event),
                                  describe(captureCallSite(), "    ")));
    } catch (...) {
    }
}

void refusedInHostFunction(const char* function) noexcept {
    try {
        report("api", fmt::format("{} was called inside a host function, where hal.h forbids it "
                                  "(it returned HAL_ERROR_NOT_PERMITTED)\n{}",
                                  function, describe(captureCallSite(), "    ")));
    } catch (...) {
    }
}

}  // namespace polyhal::check::slow
