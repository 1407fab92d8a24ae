// Implements host_function.hpp.
#include "host_function.hpp"

#include <memory>
#include <utility>

#include "call_gate.hpp"
#include "check/hooks.hpp"
#include "error.hpp"
#include "trace/hooks.hpp"

namespace polyhal {
namespace {

thread_local bool t_inHostFunction = false;

struct MarkedCall {
    halHostFn fn;
    void* userData;
    uint64_t traceFlow;  // the flow from its launch, 0 when no trace was written then
    uint64_t traceSession;
    allocator::VectorClock precedes;  // for the race detector: see launchMarkedHostFunction
};

void runMarkedCall(const MarkedCall& call) {
    call_gate::hold();
    t_inHostFunction = true;
    // Before the function can tell the host it ran: what the host does next follows the work
    // before it.
    check::hostObserved(call.precedes);
    const uint64_t start = call.traceFlow != 0 ? trace::now() : 0;
    call.fn(call.userData);
    if (call.traceFlow != 0) {
        trace::hostFunctionRan(call.traceFlow, call.traceSession, start, trace::now());
    }
    t_inHostFunction = false;
    call_gate::release();
}

void runMarked(void* pending) {
    const std::unique_ptr<MarkedCall> call(static_cast<MarkedCall*>(pending));
    runMarkedCall(*call);
}

}  // namespace

bool inHostFunction() noexcept {
    return t_inHostFunction;
}

halError refuseInHostFunction(const char* function) {
    check::refusedInHostFunction(function);
    return fail(HAL_ERROR_NOT_PERMITTED,
                "{}: not permitted inside a host function (halLaunchHostFunc); a host function "
                "may not call into the device, see hal.h",
                function);
}

void runGraphHostCall(void* call) {
    const auto& graphCall = *static_cast<const GraphHostCall*>(call);
    // No trace flow and no clock: as a replayed host function, it orders nothing for the checker.
    runMarkedCall(MarkedCall{graphCall.fn, graphCall.userData, 0, 0, allocator::VectorClock()});
}

halError launchMarkedHostFunction(const halPluginDispatchTable& vtable, halPluginStream stream,
                                  halHostFn fn, void* userData, allocator::VectorClock precedes) {
    auto call = std::make_unique<MarkedCall>(MarkedCall{fn, userData, trace::hostFunctionLaunched(),
                                                        trace::session(), std::move(precedes)});
    const halError status = vtable.launchHostFunc(stream, runMarked, call.get());
    if (status == HAL_SUCCESS) call.release();  // runMarked owns it now
    return status;
}

}  // namespace polyhal
