// CUDA's legacy default stream (legacy_stream.hpp): the implicit waits between a device's
// default stream and its blocking streams, as
// https://docs.nvidia.com/cuda/cuda-runtime-api/stream-sync-behavior.html describes them.
#include "legacy_stream.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "device.hpp"
#include "graph/capture.hpp"

namespace polyhal {

namespace detail {
std::atomic<bool> g_legacyDefaultStream{false};
}  // namespace detail

namespace {

bool blocking(const halStream_t* stream) {
    return (stream->flags & HAL_STREAM_NON_BLOCKING) == 0;
}

// Makes `waiter` wait for the work submitted to `target` so far, as halRecordEvent and
// halStreamWaitEvent on a private event would; the pool and the race detector learn the wait.
halError follow(halStream_t* waiter, halStream_t* target, const char* operation) {
    Device* device = waiter->device;
    const halPluginDispatchTable& vtable = *device->vtable;
    halPluginEvent point = nullptr;
    if (halError e = checked(vtable.eventCreate(device->native, HAL_EVENT_DISABLE_TIMING, &point),
                             device, operation)) {
        return e;
    }
    const allocator::VectorClock reached = device->pool->capture(target->poolStream);
    halError status = vtable.eventRecord(point, target->native);
    if (status == HAL_SUCCESS) status = vtable.streamWaitEvent(waiter->native, point);
    vtable.eventDestroy(point);  // a wait already enqueued on it still holds
    if (status == HAL_SUCCESS) device->pool->streamWaited(waiter->poolStream, reached);
    return checked(status, device, operation);
}

}  // namespace

namespace detail {

halError legacyBeforeSubmitSlow(halStream_t* stream, const char* operation) {
    if (!blocking(stream)) return HAL_SUCCESS;
    Device* device = stream->device;
    LegacyStreams& legacy = device->legacy;
    halStream_t* defaultStream = device->defaultStream.load(std::memory_order_acquire);
    std::lock_guard<std::mutex> lock(legacy.mutex);
    if (stream == defaultStream) {
        // A captured stream's work is not there yet: the default stream cannot wait for it.
        for (halStream_t* other : legacy.blocking) {
            if (capturing(other)) {
                return refuseInCapture(other, operation,
                                       "the legacy default stream (halSetDefaultStreamMode) "
                                       "would wait for its captured work");
            }
        }
        for (halStream_t* other : legacy.blocking) {
            if (!other->legacyPending) continue;
            if (halError e = follow(stream, other, operation)) return e;
            other->legacyPending = false;
        }
        ++legacy.defaultEpoch;
        return HAL_SUCCESS;
    }
    if (defaultStream != nullptr && stream->legacySeen != legacy.defaultEpoch) {
        if (halError e = follow(stream, defaultStream, operation)) return e;
        stream->legacySeen = legacy.defaultEpoch;
    }
    stream->legacyPending = true;
    return HAL_SUCCESS;
}

}  // namespace detail

halError defaultStreamModeFromEnvironment() {
    const char* value = std::getenv("POLYHAL_DEFAULT_STREAM");
    if (value == nullptr || *value == '\0' || std::strcmp(value, "ordinary") == 0) {
        return HAL_SUCCESS;
    }
    if (std::strcmp(value, "legacy") == 0) {
        return setDefaultStreamMode(HAL_DEFAULT_STREAM_LEGACY, "POLYHAL_DEFAULT_STREAM");
    }
    return fail(HAL_ERROR_INVALID_VALUE,
                "POLYHAL_DEFAULT_STREAM='{}' is neither 'ordinary' nor 'legacy'", value);
}

halError setDefaultStreamMode(uint32_t mode, const char* operation) {
    if (mode != HAL_DEFAULT_STREAM_ORDINARY && mode != HAL_DEFAULT_STREAM_LEGACY) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: mode {} is neither HAL_DEFAULT_STREAM_ORDINARY nor "
                    "HAL_DEFAULT_STREAM_LEGACY",
                    operation, static_cast<int32_t>(mode));
    }
    const bool legacyNow = mode == HAL_DEFAULT_STREAM_LEGACY;
    if (legacyNow && !legacyDefaultStream()) {
        // Nothing was tracked while it was off: each side's next work waits for all of the
        // other's.
        for (const std::unique_ptr<Device>& device : runtime().devices) {
            std::lock_guard<std::mutex> lock(device->legacy.mutex);
            ++device->legacy.defaultEpoch;
            for (halStream_t* stream : device->legacy.blocking) stream->legacyPending = true;
        }
    }
    detail::g_legacyDefaultStream.store(legacyNow, std::memory_order_relaxed);
    return HAL_SUCCESS;
}

void registerLegacyStream(halStream_t* stream) {
    if (!blocking(stream)) return;
    LegacyStreams& legacy = stream->device->legacy;
    std::lock_guard<std::mutex> lock(legacy.mutex);
    stream->legacySeen = legacy.defaultEpoch;
    legacy.blocking.push_back(stream);
}

void unregisterLegacyStream(halStream_t* stream) {
    if (!blocking(stream)) return;
    Device* device = stream->device;
    LegacyStreams& legacy = device->legacy;
    std::lock_guard<std::mutex> lock(legacy.mutex);
    legacy.blocking.erase(std::find(legacy.blocking.begin(), legacy.blocking.end(), stream));
    // The default stream's next work still follows what the stream was given, as in CUDA,
    // where destroying a stream does not drop its queued work. A refusal here leaves the device
    // unusable anyway; the destroy goes on.
    halStream_t* defaultStream = device->defaultStream.load(std::memory_order_acquire);
    if (legacyDefaultStream() && stream->legacyPending && defaultStream != nullptr &&
        !capturing(stream)) {
        follow(defaultStream, stream, "halDestroyStream");
    }
}

}  // namespace polyhal
