// Implements host_function.hpp.
#include "host_function.hpp"

#include <cstring>
#include <memory>

#include "error.hpp"

namespace polyhal {
namespace {

thread_local bool t_inHostFunction = false;

// What hal.h lets a host function call, of the functions that go through apiCall: those that
// never reach the device. (halGetErrorName, halGetErrorString, halGetLastErrorMessage and
// halGetVersion do not go through apiCall and are always allowed.)
constexpr const char* kPermittedInHostFunction[] = {
    "halInit",
    "halGetBackendName",
    "halGetDeviceCount",
    "halGetDevice",
    "halSetDevice",
    "halGetDeviceProperties",
    "halGetStreamPriorityRange",
    "halMemPoolGetStats",
    "halMemPoolGetAttribute",
};

struct MarkedCall {
    halHostFn fn;
    void* userData;
};

void runMarked(void* pending) {
    const std::unique_ptr<MarkedCall> call(static_cast<MarkedCall*>(pending));
    detail::runningHostFunctions.fetch_add(1, std::memory_order_relaxed);
    t_inHostFunction = true;
    call->fn(call->userData);
    t_inHostFunction = false;
    detail::runningHostFunctions.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace

namespace detail {
std::atomic<int> runningHostFunctions{0};
bool onHostFunctionThread() noexcept {
    return t_inHostFunction;
}
}  // namespace detail

halError checkPermittedInHostFunction(const char* function) {
    for (const char* permitted : kPermittedInHostFunction) {
        if (std::strcmp(function, permitted) == 0) return HAL_SUCCESS;
    }
    return fail(HAL_ERROR_NOT_PERMITTED,
                "{}: not permitted inside a host function (halLaunchHostFunc); a host function "
                "may not call into the device, see hal.h",
                function);
}

halError launchMarkedHostFunction(const halPluginDispatchTable& vtable, halPluginStream stream,
                                  halHostFn fn, void* userData) {
    auto call = std::make_unique<MarkedCall>(MarkedCall{fn, userData});
    const halError status = vtable.launchHostFunc(stream, runMarked, call.get());
    if (status == HAL_SUCCESS) call.release();  // runMarked owns it now
    return status;
}

}  // namespace polyhal
