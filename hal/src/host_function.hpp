// Host functions as the core runs them: each user function runs inside a wrapper that marks the
// thread, so that polyhal calls made from inside it can be refused before they reach a vendor
// runtime that forbids them (CUDA allows no API call in a host callback).
#ifndef POLYHAL_HAL_SRC_HOST_FUNCTION_HPP_
#define POLYHAL_HAL_SRC_HOST_FUNCTION_HPP_

#include <polyhal/plugin.h>

struct halStream_t;

namespace polyhal {

// Is the calling thread running a host function right now? Read on the careful path only: the
// call gate reads the same per-thread flag (call_gate.hpp).
bool inHostFunction() noexcept;

// HAL_ERROR_NOT_PERMITTED, with a message naming `function`, a public function that hal.h does not
// allow inside a host function (CallPolicy), called on a thread inside one.
halError refuseInHostFunction(const char* function);

// Enqueues fn(userData) on `stream` through the plugin, marked as a host function while it runs.
// While races are checked it carries the stream's clock before it: once it runs, the host has
// seen that work finish, as a query that succeeds has. Returns the plugin's result, unadopted.
halError launchMarkedHostFunction(halStream_t* stream, halHostFn fn, void* userData);

// A host function a native graph runs on each of its launches (halPluginGraphDesc): the graph
// lists runGraphHostCall with a GraphHostCall it keeps, which runs fn(userData) marked as
// launchMarkedHostFunction's wrapper does, and leaves the GraphHostCall to its owner.
struct GraphHostCall {
    halHostFn fn;
    void* userData;
};
void runGraphHostCall(void* call);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_HOST_FUNCTION_HPP_
