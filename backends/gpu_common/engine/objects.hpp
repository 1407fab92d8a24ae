// The plugin-side objects behind the opaque halPlugin* handles, for a vendor API `Api`.
//
// Each object remembers its device, because the vendor API acts on the calling thread's current
// device (CUDA: context), which every entry makes current for the call (current_device.hpp).
// Objects never change after creation, except a device's activation (once, under its mutex) and
// its queue of frees (under its own), so any thread may use them at once.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_ENGINE_OBJECTS_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_ENGINE_OBJECTS_HPP_

#include <atomic>
#include <mutex>
#include <polyhal/plugin_support.hpp>

#include "gpu_common/engine/deferred_frees.hpp"

namespace polyhal::gpu {

template <class Api>
struct Device {
    using Handle = halPluginDevice;
    typename Api::NativeDevice native;
    // Set by activate() on the device's first use, so that opening a device costs nothing (a CUDA
    // primary context holds hundreds of MB of device memory, and a device in exclusive-process
    // mode may belong to another process).
    mutable std::mutex activation;
    mutable std::atomic<bool> active{false};
    // What makes the device current on a thread (CUDA: its retained primary context).
    mutable typename Api::Context context{};
    // The thread that returns the device's memory to the vendor (engine/deferred_frees.hpp).
    mutable DeferredFrees<Api> frees;
};

// An event or module: the vendor's handle and the device it belongs to.
template <class Api, class Native, class HandleType>
struct DeviceObject {
    using Handle = HandleType;
    const Device<Api>* device;
    Native native;
};

template <class Api>
struct Stream {
    using Handle = halPluginStream;
    const Device<Api>* device;
    typename Api::Stream native;
    int priority;
    // The next in RetiredStreams' list (engine/retired_streams.hpp), once destroyed.
    Stream* nextRetired;
};
template <class Api>
using Event = DeviceObject<Api, typename Api::Event, halPluginEvent>;
template <class Api>
using Module = DeviceObject<Api, typename Api::Module, halPluginModule>;

// A function handle is the one handle that is not an object's address (plugin::toHandle and
// plugin::fromHandle do not apply): it is the vendor's own function handle, which the vendor
// module owns and frees, so an object of its own would need the module to track and free it too.
template <class Api>
halPluginFunction toFunctionHandle(typename Api::Function function) noexcept {
    return reinterpret_cast<halPluginFunction>(function);
}
template <class Api>
typename Api::Function fromFunctionHandle(halPluginFunction handle) noexcept {
    return reinterpret_cast<typename Api::Function>(handle);
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_ENGINE_OBJECTS_HPP_
