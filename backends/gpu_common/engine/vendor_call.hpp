// Calling a vendor function and turning its result into a halError with the vendor's text.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_ENGINE_VENDOR_CALL_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_ENGINE_VENDOR_CALL_HPP_

#include <cstring>
#include <polyhal/plugin_support.hpp>

#include "plugin_common/symbol_table.hpp"

namespace polyhal::gpu {

// Sets the calling thread's error message to "<function>: <NAME> (<text>)[: <detail>]" from the
// vendor's error name and text, and returns `code`.
template <class Api>
[[gnu::cold, gnu::noinline]] halError failCall(halError code, typename Api::Result result,
                                               const char* function,
                                               const char* detail = nullptr) noexcept {
    const char* name = nullptr;
    const char* text = nullptr;
    Api::describe(result, &name, &text);
    const char* separator = detail != nullptr ? ": " : "";
    if (detail == nullptr) detail = "";
    if (name == nullptr) {
        return plugin::fail(code, "%s: unrecognized error %d%s%s", function,
                            static_cast<int>(result), separator, detail);
    }
    // HIP's text is sometimes its name again; print it once.
    if (text == nullptr || std::strcmp(name, text) == 0) {
        return plugin::fail(code, "%s: %s%s%s", function, name, separator, detail);
    }
    return plugin::fail(code, "%s: %s (%s)%s%s", function, name, text, separator, detail);
}

// Calls `function`; a failure becomes its halError with the vendor's message.
template <class Api, class Fn, class... Args>
inline halError call(const Symbol<Fn>& function, Args... args) noexcept {
    const typename Api::Result result = function.address(args...);
    if (__builtin_expect(result == Api::kSuccess, 1)) return HAL_SUCCESS;
    return failCall<Api>(Api::toHalError(result), result, function.name);
}

// As call(), for the functions that poll: "not ready" is an answer, not a failure, so it returns
// HAL_ERROR_NOT_READY and leaves the thread's error message alone.
template <class Api, class Fn, class... Args>
inline halError query(const Symbol<Fn>& function, Args... args) noexcept {
    const typename Api::Result result = function.address(args...);
    if (result == Api::kSuccess) return HAL_SUCCESS;
    if (result == Api::kNotReady) return HAL_ERROR_NOT_READY;
    return failCall<Api>(Api::toHalError(result), result, function.name);
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_ENGINE_VENDOR_CALL_HPP_
