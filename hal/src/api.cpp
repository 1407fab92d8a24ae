// Implements api.hpp's careful path.
#include "api.hpp"

namespace polyhal {

halError admitCall(const char* function, CallPolicy policy, trace::CallSpan& span) {
    if (policy != CallPolicy::kHostOnly && inHostFunction()) return refuseInHostFunction(function);
    if (halError e = ensureInitialized()) return e;
    if (policy == CallPolicy::kWaitsForDevice) {
        if (halError e = checkPermittedDuringCapture(function)) return e;
    }
    if (trace::enabled()) span.open(function);
    return HAL_SUCCESS;
}

}  // namespace polyhal
