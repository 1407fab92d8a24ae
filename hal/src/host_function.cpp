// Implements host_function.hpp.
#include "host_function.hpp"

#include <polyhal/allocator/vector_clock.hpp>

#include <atomic>
#include <new>
#include <utility>

#include "call_gate.hpp"
#include "check/hooks.hpp"
#include "device.hpp"
#include "error.hpp"
#include "objects.hpp"
#include "trace/hooks.hpp"

namespace polyhal {

namespace call_gate::detail {
__thread bool t_inHostFunction __attribute__((tls_model("initial-exec"))) = false;
}  // namespace call_gate::detail

namespace {

using call_gate::detail::t_inHostFunction;

struct MarkedCall {
    halHostFn fn;
    void* userData;
    uint64_t traceFlow;  // the flow from its launch, 0 when no trace was written then
    uint64_t traceSession;
    allocator::VectorClock precedes;  // for the race detector: see launchMarkedHostFunction
    MarkedCall* next = nullptr;       // while it waits for reuse
};

// Marked calls are reused, and the launching thread and the backend's thread share as little as
// they can: a call allocated on one thread and freed on the other defeats malloc's per-thread
// caches, and every cache line both write moves between their CPUs on each host function. A
// finished call goes onto the shared list with a lock-free push. A launching thread takes from
// its own spares, and refills them only when they run out: with the whole shared list at once
// (an exchange, which no ABA interleaving can fool), or with a batch of new calls when that is
// empty. Calls are never freed: there are at most as many as were pending at once plus what
// each launching thread keeps spare, and a thread's spares go back to the list when it exits.
struct alignas(64) FinishedCalls {  // a cache line of its own
    std::atomic<MarkedCall*> first{nullptr};
};
FinishedCalls g_finished;

constexpr int kSpareBatch = 8;

__thread MarkedCall* t_spareCalls __attribute__((tls_model("initial-exec"))) = nullptr;
// Set once the thread's spares went back at its exit: a host function launched later, from the
// destructor of a thread_local destroyed after them, takes a call of its own.
__thread bool t_sparesReturned __attribute__((tls_model("initial-exec"))) = false;

void pushFinished(MarkedCall* first, MarkedCall* last) {
    last->next = g_finished.first.load(std::memory_order_relaxed);
    while (!g_finished.first.compare_exchange_weak(last->next, first, std::memory_order_release,
                                                   std::memory_order_relaxed)) {
    }
}

// A thread's spares go back to the shared list when it exits.
struct SpareCallsOwner {
    SpareCallsOwner() = default;
    SpareCallsOwner(const SpareCallsOwner&) = delete;
    SpareCallsOwner& operator=(const SpareCallsOwner&) = delete;
    ~SpareCallsOwner() {
        t_sparesReturned = true;
        MarkedCall* first = std::exchange(t_spareCalls, nullptr);
        if (first == nullptr) return;
        MarkedCall* last = first;
        while (last->next != nullptr) last = last->next;
        pushFinished(first, last);
    }
    bool armed = false;
};
thread_local SpareCallsOwner t_spareCallsOwner;

// New spares: at least one (or std::bad_alloc), as many of kSpareBatch as memory allows.
MarkedCall* allocateSpares() {
    MarkedCall* batch = new MarkedCall();
    for (int i = 1; i < kSpareBatch; ++i) {
        auto* call = new (std::nothrow) MarkedCall();
        if (call == nullptr) break;
        call->next = batch;
        batch = call;
    }
    return batch;
}

MarkedCall* refillSpares() {
    if (t_sparesReturned) return new MarkedCall();  // it joins the shared list once finished
    t_spareCallsOwner.armed = true;                 // constructs it, so that it runs at exit
    if (MarkedCall* finished = g_finished.first.exchange(nullptr, std::memory_order_acquire)) {
        return finished;
    }
    return allocateSpares();
}

MarkedCall* takeCall() {
    MarkedCall* call = t_spareCalls;
    if (__builtin_expect(call == nullptr, 0)) call = refillSpares();
    t_spareCalls = call->next;
    return call;
}

// A call the launching thread took and did not launch.
void keepCall(MarkedCall* call) {
    if (t_sparesReturned) {
        pushFinished(call, call);
        return;
    }
    call->next = t_spareCalls;
    t_spareCalls = call;
}

void runMarkedCall(const MarkedCall& call) {
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
}

void runMarked(void* pending) {
    auto* call = static_cast<MarkedCall*>(pending);
    runMarkedCall(*call);
    pushFinished(call, call);
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

halError launchMarkedHostFunction(halStream_t* stream, halHostFn fn, void* userData) {
    MarkedCall* call = takeCall();
    call->fn = fn;
    call->userData = userData;
    call->traceFlow = trace::hostFunctionLaunched();
    call->traceSession = trace::session();
    if (check::enabled(check::kRaces)) {
        try {
            stream->device->pool->captureInto(stream->poolStream, &call->precedes);
        } catch (...) {  // out of memory: the call stays a spare
            keepCall(call);
            throw;
        }
    } else {
        call->precedes.clear();
    }
    const halError status = stream->device->vtable->launchHostFunc(stream->native, runMarked, call);
    if (status != HAL_SUCCESS) keepCall(call);  // otherwise runMarked finishes it
    return status;
}

}  // namespace polyhal
