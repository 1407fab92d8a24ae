// The plugin-side objects behind the opaque halPlugin* handles, for a vendor API `Api`.
//
// Each object remembers its device, because the vendor API acts on the calling thread's current
// device (CUDA: context), which every entry makes current for the call (current_device.hpp).
// Objects never change after creation, except a device's activation (once, under its mutex), so
// any thread may use them at once.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_OBJECTS_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_OBJECTS_HPP_

#include <polyhal/plugin.h>

#include <atomic>
#include <mutex>

namespace polyhal::gpu {

template <class Api>
struct Device {
    typename Api::NativeDevice native;
    // Set by activate() on the device's first use, so that opening a device costs nothing (a CUDA
    // primary context holds hundreds of MB of device memory, and a device in exclusive-process
    // mode may belong to another process).
    mutable std::mutex activation;
    mutable std::atomic<bool> active{false};
    // What makes the device current on a thread (CUDA: its retained primary context).
    mutable typename Api::Context context{};
    // Where device memory is released in stream order, or nullptr when the vendor or the device
    // cannot: the release then waits for the device (memory.hpp).
    mutable typename Api::Stream releaseStream{};
};

template <class Api>
struct Stream {
    const Device<Api>* device;
    typename Api::Stream native;
};

template <class Api>
struct Event {
    const Device<Api>* device;
    typename Api::Event native;
};

template <class Api>
struct Module {
    const Device<Api>* device;
    typename Api::Module native;
};

// Handles are the objects' addresses. A function handle is the vendor's own function handle:
// the vendor module owns it, so it needs no object of its own.
template <class Api>
Device<Api>* fromHandle(halPluginDevice handle) noexcept {
    return reinterpret_cast<Device<Api>*>(handle);
}
template <class Api>
Stream<Api>* fromHandle(halPluginStream handle) noexcept {
    return reinterpret_cast<Stream<Api>*>(handle);
}
template <class Api>
Event<Api>* fromHandle(halPluginEvent handle) noexcept {
    return reinterpret_cast<Event<Api>*>(handle);
}
template <class Api>
Module<Api>* fromHandle(halPluginModule handle) noexcept {
    return reinterpret_cast<Module<Api>*>(handle);
}
template <class Api>
typename Api::Function fromHandle(halPluginFunction handle) noexcept {
    return reinterpret_cast<typename Api::Function>(handle);
}

template <class Api>
halPluginDevice toHandle(Device<Api>* device) noexcept {
    return reinterpret_cast<halPluginDevice>(device);
}
template <class Api>
halPluginStream toHandle(Stream<Api>* stream) noexcept {
    return reinterpret_cast<halPluginStream>(stream);
}
template <class Api>
halPluginEvent toHandle(Event<Api>* event) noexcept {
    return reinterpret_cast<halPluginEvent>(event);
}
template <class Api>
halPluginModule toHandle(Module<Api>* module) noexcept {
    return reinterpret_cast<halPluginModule>(module);
}
template <class Api>
halPluginFunction toFunctionHandle(typename Api::Function function) noexcept {
    return reinterpret_cast<halPluginFunction>(function);
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_OBJECTS_HPP_
