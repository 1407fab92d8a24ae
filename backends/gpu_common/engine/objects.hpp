// The plugin-side objects behind the opaque halPlugin* handles, for a vendor API `Api`.
//
// Each object remembers its device, because the vendor API acts on the calling thread's current
// device (CUDA: context), which every entry makes current for the call (current_device.hpp).
// Objects never change after creation, except a device's activation (once, under its mutex), its
// queue of frees (under its own), a module's list of functions (lock-free) and a function's
// raised shared memory limit (under the Api's lock), so any thread may use them at once.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_ENGINE_OBJECTS_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_ENGINE_OBJECTS_HPP_

#include <atomic>
#include <mutex>
#include <polyhal/plugin_support.hpp>
#include <utility>

#include "gpu_common/engine/api_contract.hpp"
#include "gpu_common/engine/deferred_frees.hpp"

namespace polyhal::gpu {

template <class Api>
struct Device {
    static_assert(apiMeetsContract<Api>());
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

// A kernel: the vendor's function handle (which its module owns) and what every launch checks,
// read from the vendor once, when the kernel is looked up (Api::KernelInfo, Api::describeKernel),
// so that a launch asks the vendor nothing before launching.
template <class Api>
struct Function {
    using Handle = halPluginFunction;
    typename Api::Function native;
    typename Api::KernelInfo info;
    Function* next;  // the module's next function
};

// A loaded module and the functions looked up in it, which go with it.
template <class Api>
struct Module {
    using Handle = halPluginModule;
    explicit Module(const Device<Api>* owner) noexcept : device(owner) {}
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;
    ~Module() {
        for (Function<Api>* function = functions.load(); function != nullptr;) {
            delete std::exchange(function, function->next);
        }
    }
    // Takes `function` into the module's list; any thread may add one at any time.
    void add(Function<Api>* function) noexcept {
        function->next = functions.load(std::memory_order_relaxed);
        while (!functions.compare_exchange_weak(function->next, function, std::memory_order_release,
                                                std::memory_order_relaxed)) {
        }
    }

    const Device<Api>* device;
    typename Api::Module native{};
    typename Api::ModuleInfo info;  // what its image says of its kernels (Api::describeModule)
    std::atomic<Function<Api>*> functions{nullptr};
};

// The vendor's handle of the function behind a plugin function handle.
template <class Api>
typename Api::Function nativeFunction(halPluginFunction handle) noexcept {
    return plugin::fromHandle<Function<Api>>(handle).native;
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_ENGINE_OBJECTS_HPP_
