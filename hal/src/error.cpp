// Implements error.hpp.
#include "error.hpp"

#include "enum_bits.hpp"

namespace polyhal {
namespace {

thread_local std::string t_lastError;
thread_local std::string t_pluginError;

// What halGetErrorName answers for a value that is no halError; isHalError compares with it.
constexpr const char* kUnrecognizedName = "HAL_ERROR_UNRECOGNIZED";

}  // namespace

void setLastErrorMessage(std::string message) {
    t_lastError = std::move(message);
}

const char* lastErrorMessage() {
    return t_lastError.c_str();
}

void setPluginErrorMessage(const char* message) {
    t_pluginError = message != nullptr ? message : "";
}

std::string takePluginErrorMessage(halError code, const char* backend, const char* operation) {
    if (t_pluginError.empty()) {
        return fmt::format("{}: {} failed: {}", backend, operation, halGetErrorString(code));
    }
    std::string message = fmt::format("{}: {}", backend, t_pluginError);
    t_pluginError.clear();
    return message;
}

bool isHalError(halError code) {
    return halGetErrorName(code) != kUnrecognizedName;
}

halError pluginResult(halError code, const char* entry) {
    if (__builtin_expect(code == HAL_SUCCESS, 1) || isHalError(code)) return code;
    const uint32_t raw = enumBits(code);
    std::string detail = fmt::format(
        "{} returned {} ({:#x}), which is not a halError (reported as "
        "HAL_ERROR_BACKEND)",
        entry, raw, raw);
    if (!t_pluginError.empty()) detail += ": " + t_pluginError;
    t_pluginError = std::move(detail);
    return HAL_ERROR_BACKEND;
}

halError adoptPluginError(halError code, const char* backend, const char* operation) {
    t_lastError = takePluginErrorMessage(code, backend, operation);
    return code;
}

}  // namespace polyhal

extern "C" {

HAL_API const char* halGetErrorName(halError error) {
    switch (polyhal::enumBits(error)) {
    case HAL_SUCCESS: return "HAL_SUCCESS";
    case HAL_ERROR_INVALID_VALUE: return "HAL_ERROR_INVALID_VALUE";
    case HAL_ERROR_INVALID_HANDLE: return "HAL_ERROR_INVALID_HANDLE";
    case HAL_ERROR_OUT_OF_MEMORY: return "HAL_ERROR_OUT_OF_MEMORY";
    case HAL_ERROR_NOT_READY: return "HAL_ERROR_NOT_READY";
    case HAL_ERROR_NOT_SUPPORTED: return "HAL_ERROR_NOT_SUPPORTED";
    case HAL_ERROR_NO_DEVICE: return "HAL_ERROR_NO_DEVICE";
    case HAL_ERROR_BACKEND_NOT_FOUND: return "HAL_ERROR_BACKEND_NOT_FOUND";
    case HAL_ERROR_BACKEND_INCOMPATIBLE: return "HAL_ERROR_BACKEND_INCOMPATIBLE";
    case HAL_ERROR_LAUNCH_FAILED: return "HAL_ERROR_LAUNCH_FAILED";
    case HAL_ERROR_BACKEND: return "HAL_ERROR_BACKEND";
    case HAL_ERROR_INVALID_DEVICE: return "HAL_ERROR_INVALID_DEVICE";
    case HAL_ERROR_INVALID_IMAGE: return "HAL_ERROR_INVALID_IMAGE";
    case HAL_ERROR_NOT_FOUND: return "HAL_ERROR_NOT_FOUND";
    case HAL_ERROR_NOT_PERMITTED: return "HAL_ERROR_NOT_PERMITTED";
    case HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED: return "HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    case HAL_ERROR_STREAM_CAPTURE_INVALIDATED: return "HAL_ERROR_STREAM_CAPTURE_INVALIDATED";
    case HAL_ERROR_STREAM_CAPTURE_UNJOINED: return "HAL_ERROR_STREAM_CAPTURE_UNJOINED";
    case HAL_ERROR_STREAM_CAPTURE_ISOLATION: return "HAL_ERROR_STREAM_CAPTURE_ISOLATION";
    case HAL_ERROR_STREAM_CAPTURE_WRONG_THREAD: return "HAL_ERROR_STREAM_CAPTURE_WRONG_THREAD";
    case HAL_ERROR_STREAM_CAPTURE_UNMATCHED: return "HAL_ERROR_STREAM_CAPTURE_UNMATCHED";
    case HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
        return "HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED";
    case HAL_ERROR_HOST_MEMORY_NOT_REGISTERED: return "HAL_ERROR_HOST_MEMORY_NOT_REGISTERED";
    case HAL_ERROR_UNKNOWN: return "HAL_ERROR_UNKNOWN";
    case HAL_ERROR_FORCE_UINT32: break;
    }
    return polyhal::kUnrecognizedName;
}

HAL_API const char* halGetErrorString(halError error) {
    switch (polyhal::enumBits(error)) {
    case HAL_SUCCESS: return "no error";
    case HAL_ERROR_INVALID_VALUE: return "an argument is invalid";
    case HAL_ERROR_INVALID_HANDLE: return "the handle is NULL, destroyed or not a polyhal handle";
    case HAL_ERROR_OUT_OF_MEMORY: return "out of memory";
    case HAL_ERROR_NOT_READY: return "the work has not completed yet";
    case HAL_ERROR_NOT_SUPPORTED: return "the backend does not support this operation";
    case HAL_ERROR_NO_DEVICE: return "no usable device";
    case HAL_ERROR_BACKEND_NOT_FOUND: return "the backend could not be found or loaded";
    case HAL_ERROR_BACKEND_INCOMPATIBLE: return "the backend plugin speaks an incompatible ABI";
    case HAL_ERROR_LAUNCH_FAILED: return "work failed while running on the device";
    case HAL_ERROR_BACKEND: return "the vendor runtime reported an error";
    case HAL_ERROR_INVALID_DEVICE: return "no device with this number";
    case HAL_ERROR_INVALID_IMAGE: return "the module image cannot be loaded";
    case HAL_ERROR_NOT_FOUND: return "the named symbol does not exist";
    case HAL_ERROR_NOT_PERMITTED: return "the call is not permitted inside a host function";
    case HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED:
        return "the call cannot be made while a stream is being captured";
    case HAL_ERROR_STREAM_CAPTURE_INVALIDATED: return "the stream capture was invalidated";
    case HAL_ERROR_STREAM_CAPTURE_UNJOINED:
        return "a stream forked into the capture was not joined back";
    case HAL_ERROR_STREAM_CAPTURE_ISOLATION: return "the capture would depend on work outside it";
    case HAL_ERROR_STREAM_CAPTURE_WRONG_THREAD: return "the capture was begun on another thread";
    case HAL_ERROR_STREAM_CAPTURE_UNMATCHED: return "the stream did not begin a capture";
    case HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED: return "the host memory is registered already";
    case HAL_ERROR_HOST_MEMORY_NOT_REGISTERED: return "the host memory is not registered";
    case HAL_ERROR_UNKNOWN: return "an unexpected internal error";
    case HAL_ERROR_FORCE_UINT32: break;
    }
    return "unrecognized error code";
}

HAL_API const char* halGetLastErrorMessage(void) {
    return polyhal::lastErrorMessage();
}

}  // extern "C"
