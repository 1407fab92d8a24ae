// Converting ze_result_t to polyhal errors, keeping Level Zero's own name in the message.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_ERROR_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_ERROR_HPP_

#include <level_zero/ze_api.h>
#include <polyhal/hal.h>

#include <string>

namespace polyhal::level_zero {

// The enumerator's name ("ZE_RESULT_ERROR_DEVICE_LOST"), or "ZE_RESULT_<unrecognized>".
const char* resultName(ze_result_t result);

// A short description of the result, from the Level Zero specification.
const char* resultDescription(ze_result_t result);

// The halError that best describes `result` (HAL_SUCCESS for ZE_RESULT_SUCCESS).
halError toHalError(ze_result_t result);

// "<call>: <name> (<description>)", the form of every Level Zero error message.
std::string describe(ze_result_t result, const char* call);

// HAL_SUCCESS for ZE_RESULT_SUCCESS; otherwise sets describe(result, call) as the message and
// returns toHalError(result).
halError check(ze_result_t result, const char* call);

}  // namespace polyhal::level_zero

// Calls ze.<function>.address(args...) and returns from the enclosing function on failure.
#define POLYHAL_ZE_RETURN_IF_ERROR(function, ...)                                \
    do {                                                                         \
        const halError polyhal_ze_error_ = ::polyhal::level_zero::check(         \
            ::polyhal::level_zero::ze.function.address(__VA_ARGS__), #function); \
        if (polyhal_ze_error_ != HAL_SUCCESS) return polyhal_ze_error_;          \
    } while (false)

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_ERROR_HPP_
