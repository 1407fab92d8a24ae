// CUDA's legacy default stream, as an option (halSetDefaultStreamMode, POLYHAL_DEFAULT_STREAM):
// work on a device's default stream waits for its blocking streams, and they for it. While the
// option is off, each enqueue pays one relaxed load; the implicit waits are out of line
// (legacy_stream.cpp).
#ifndef POLYHAL_HAL_SRC_LEGACY_STREAM_HPP_
#define POLYHAL_HAL_SRC_LEGACY_STREAM_HPP_

#include <polyhal/hal.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

struct halStream_t;

namespace polyhal {

struct Device;

// A device's blocking streams and what the implicit waits have covered, under one lock.
struct LegacyStreams {
    std::mutex mutex;
    std::vector<halStream_t*> blocking;  // live streams created without HAL_STREAM_NON_BLOCKING
    // Counts the operations given to the default stream; a blocking stream whose legacySeen
    // differs has not yet waited for the latest of them.
    uint64_t defaultEpoch = 0;
};

namespace detail {
extern std::atomic<bool> g_legacyDefaultStream;
halError legacyBeforeSubmitSlow(halStream_t* stream, const char* operation);
}  // namespace detail

inline bool legacyDefaultStream() noexcept {
    return detail::g_legacyDefaultStream.load(std::memory_order_relaxed);
}

// `stream` (not capturing) is about to be given an operation: under the legacy default stream,
// first make it wait for what it must follow. Called before the pool and the race detector take
// what the operation follows, so that both see the implicit waits.
inline halError legacyBeforeSubmit(halStream_t* stream, const char* operation) {
    if (__builtin_expect(!legacyDefaultStream(), 1)) return HAL_SUCCESS;
    return detail::legacyBeforeSubmitSlow(stream, operation);
}

// Reads POLYHAL_DEFAULT_STREAM (at initialisation).
halError defaultStreamModeFromEnvironment();
// Sets the mode from its bits (enumBits of halSetDefaultStreamMode's argument, which may be any
// value); HAL_ERROR_INVALID_VALUE for one that is not a halDefaultStreamMode.
halError setDefaultStreamMode(uint32_t mode, const char* operation);

// A stream created or about to be destroyed: blocking ones join or leave their device's list.
void registerLegacyStream(halStream_t* stream);
void unregisterLegacyStream(halStream_t* stream);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_LEGACY_STREAM_HPP_
