// Tracing: starting and stopping a trace, and the user's ranges on a thread's track.
#include <vector>

#include "api.hpp"

using namespace polyhal;

namespace {

// The session each open range of this thread began in (0: none was written then), innermost
// last: a range is closed in the trace only if it was opened in the same one.
std::vector<uint64_t>& openRanges() {
    static thread_local std::vector<uint64_t> ranges;
    return ranges;
}

trace::Record rangeRecord(char phase, const char* name) {
    return trace::threadRecord(phase, name, "range", trace::now());
}

}  // namespace

extern "C" {

HAL_API halError halTraceStart(const char* path) {
    return apiCall(__func__, CallPolicy::kReachesDevice,
                   [&, op = __func__] { return trace::start(path, op); });
}

HAL_API halError halTraceStop(void) {
    return apiCall(__func__, CallPolicy::kReachesDevice,
                   [op = __func__] { return trace::stop(op); });
}

// The ranges do not go through apiCall: they reach no device, so they are allowed inside host
// functions. They initialise polyhal all the same, so that POLYHAL_TRACE's trace has begun when
// the program's first range opens.
HAL_API halError halTraceRangePush(const char* name) {
    if (halError e = ensureInitialized()) return e;
    if (name == nullptr) return fail(HAL_ERROR_INVALID_VALUE, "{}: name is NULL", __func__);
    try {
        const uint64_t session = trace::session();
        openRanges().push_back(session);
        if (session != 0) trace::emit(rangeRecord('B', trace::intern(name)), session);
        return HAL_SUCCESS;
    } catch (const std::bad_alloc&) {
        return fail(HAL_ERROR_OUT_OF_MEMORY, "{}: out of host memory", __func__);
    }
}

HAL_API halError halTraceRangePop(void) {
    if (halError e = ensureInitialized()) return e;
    std::vector<uint64_t>& ranges = openRanges();
    if (ranges.empty()) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: no range is open on this thread", __func__);
    }
    const uint64_t session = ranges.back();
    ranges.pop_back();
    if (session != 0 && session == trace::session()) trace::emit(rangeRecord('E', ""), session);
    return HAL_SUCCESS;
}

}  // extern "C"
