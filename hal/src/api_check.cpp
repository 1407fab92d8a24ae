// Checked mode: which checks are on, the findings' count and a foreign caller's call site.
#include "api.hpp"
#include "check/findings.hpp"
#include "check/hooks.hpp"

using namespace polyhal;

extern "C" {

HAL_API halError halCheckGetEnabled(uint32_t* checks) {
    return hostGetter(__func__, checks, "checks",
                      [] { return check::detail::g_checks.load(std::memory_order_relaxed); });
}

HAL_API halError halCheckGetFindingCount(uint64_t* count) {
    return hostGetter(__func__, count, "count", [] { return check::findingCount(); });
}

HAL_API halError halCheckSetCallSite(const char* site) {
    return apiCall(__func__, CallPolicy::kHostOnly, [&] {
        check::setForeignCallSite(site);
        return HAL_SUCCESS;
    });
}

}  // extern "C"
