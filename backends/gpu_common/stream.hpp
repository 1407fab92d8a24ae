// Stream entries, host functions in stream order, and the native stream handle.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_STREAM_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_STREAM_HPP_

#include <memory>
#include <new>

#include "gpu_common/engine/current_device.hpp"
#include "gpu_common/engine/native_graph.hpp"
#include "gpu_common/engine/objects.hpp"
#include "gpu_common/engine/retired_streams.hpp"
#include "gpu_common/engine/vendor_call.hpp"

namespace polyhal::gpu {

// polyhal streams are the vendor's non-blocking streams: they never wait for the vendor's legacy
// default stream, which other libraries in the process may use, so different polyhal streams
// run concurrently unless ordered by events. `flags` has no defined bits yet. Where destroyed
// streams are kept (engine/retired_streams.hpp), an idle one of the same priority is taken back.
template <class Api>
halError streamCreate(halPluginDevice deviceHandle, int priority, uint32_t /*flags*/,
                      halPluginStream* handle) noexcept {
    const Device<Api>* device = &plugin::fromHandle<Device<Api>>(deviceHandle);
    const CurrentDevice<Api> current(*device);
    if (halError error = current.error()) return error;
    if constexpr (Api::kEventQueriesReadTheirStream) {
        if (std::unique_ptr<Stream<Api>> kept = RetiredStreams<Api>::take(device, priority)) {
            *handle = plugin::toHandle(kept.release());
            return HAL_SUCCESS;
        }
    }
    auto stream =
        std::unique_ptr<Stream<Api>>(new (std::nothrow) Stream<Api>{device, {}, priority, nullptr});
    if (stream == nullptr) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "no host memory for a stream");
    }
    if (halError error = call<Api>(Api::symbols.streamCreate, &stream->native,
                                   Api::kStreamNonBlocking, priority)) {
        return error;
    }
    *handle = plugin::toHandle(stream.release());
    return HAL_SUCCESS;
}

// The vendor releases the stream once its work has finished; the call does not wait for it.
// Destroying a stream needs no current context (the stream knows its own), so the handle is
// released even when the device cannot be made current: nothing could release it later. Where
// the vendor's event queries read the stream of an event's last record, the stream is kept
// instead (engine/retired_streams.hpp).
template <class Api>
halError streamDestroy(halPluginStream handle) noexcept {
    std::unique_ptr<Stream<Api>> stream(&plugin::fromHandle<Stream<Api>>(handle));
    if constexpr (Api::kEventQueriesReadTheirStream) {
        RetiredStreams<Api>::add(std::move(stream));
        return HAL_SUCCESS;
    } else {
        const CurrentDevice<Api> current(*stream->device);
        const halError destroyed = call<Api>(Api::symbols.streamDestroy, stream->native);
        return current.error() != HAL_SUCCESS ? current.error() : destroyed;
    }
}

template <class Api>
halError streamSynchronize(halPluginStream handle) noexcept {
    const Stream<Api>& stream = plugin::fromHandle<Stream<Api>>(handle);
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    const halError status = call<Api>(Api::symbols.streamSynchronize, stream.native);
    reapRetiredGraphs<Api>();
    return status;
}

template <class Api>
halError streamQuery(halPluginStream handle) noexcept {
    const Stream<Api>& stream = plugin::fromHandle<Stream<Api>>(handle);
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    return query<Api>(Api::symbols.streamQuery, stream.native);
}

template <class Api>
halError streamWaitEvent(halPluginStream streamHandle, halPluginEvent eventHandle) noexcept {
    const Stream<Api>& stream = plugin::fromHandle<Stream<Api>>(streamHandle);
    const Event<Api>& event = plugin::fromHandle<Event<Api>>(eventHandle);
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.streamWaitEvent, stream.native, event.native, 0u);
}

template <class Api>
halError launchHostFunc(halPluginStream handle, halHostFn fn, void* userData) noexcept {
    const Stream<Api>& stream = plugin::fromHandle<Stream<Api>>(handle);
    const CurrentDevice<Api> current(*stream.device);
    if (halError error = current.error()) return error;
    return Api::launchHostFunc(stream.native, fn, userData);
}

template <class Api>
halError streamGetNativeHandle(halPluginStream handle, void** native) noexcept {
    *native = plugin::fromHandle<Stream<Api>>(handle).native;
    return HAL_SUCCESS;
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_STREAM_HPP_
