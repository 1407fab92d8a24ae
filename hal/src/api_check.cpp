// Checked mode: which checks are on, the findings' count and a foreign caller's call site.
#include "api.hpp"
#include "check/findings.hpp"
#include "check/hooks.hpp"

using namespace polyhal;

extern "C" {

HAL_API halError halCheckGetEnabled(uint32_t* checks) {
    return apiCall(__func__, CallPolicy::kHostOnly, [&, op = __func__] {
        if (halError e = requireOutput(checks, op, "checks")) return e;
        *checks = check::detail::g_checks.load(std::memory_order_relaxed);
        return HAL_SUCCESS;
    });
}

HAL_API halError halCheckGetFindingCount(uint64_t* count) {
    return apiCall(__func__, CallPolicy::kHostOnly, [&, op = __func__] {
        if (halError e = requireOutput(count, op, "count")) return e;
        *count = check::findingCount();
        return HAL_SUCCESS;
    });
}

HAL_API halError halCheckSetCallSite(const char* site) {
    return apiCall(__func__, CallPolicy::kHostOnly, [&] {
        check::setForeignCallSite(site);
        return HAL_SUCCESS;
    });
}

}  // extern "C"
