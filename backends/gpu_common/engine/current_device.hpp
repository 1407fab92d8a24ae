// Making a device current for the duration of one entry, and opening it on its first use.
//
// The calling thread belongs to the application, which may use the vendor API itself: an entry
// makes its device current (CUDA: pushes the device's primary context; HIP: sets the device) and
// puts back what was current before it returns, whatever it returns.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_ENGINE_CURRENT_DEVICE_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_ENGINE_CURRENT_DEVICE_HPP_

#include "gpu_common/engine/objects.hpp"
#include "gpu_common/engine/vendor_call.hpp"

namespace polyhal::gpu {

// Makes `context` current on the calling thread until the scope ends.
template <class Api>
class ContextScope {
  public:
    explicit ContextScope(typename Api::Context context) noexcept { enter(context); }
    ~ContextScope() {
        if (switched_) Api::leaveContext(previous_);
    }
    ContextScope(const ContextScope&) = delete;
    ContextScope& operator=(const ContextScope&) = delete;

    halError error() const noexcept { return error_; }

  protected:
    ContextScope() noexcept = default;
    void enter(typename Api::Context context) noexcept {
        error_ = Api::enterContext(context, &previous_, &switched_);
    }

    halError error_ = HAL_SUCCESS;

  private:
    // First made, last undone: every vendor call of the scope, the device's activation included,
    // is made with the thread's capture interaction relaxed (Api::RelaxedCapture).
    typename Api::RelaxedCapture relaxed_;
    typename Api::Context previous_{};
    bool switched_ = false;
};

// Opens `device` for use, once: retains its context. A failure is returned and tried again by the
// next entry. noexcept although it locks a std::mutex: locking a default mutex the thread does not
// hold cannot fail, so nothing throws.
template <class Api>
halError activate(const Device<Api>& device) noexcept {
    if (device.active.load(std::memory_order_acquire)) return HAL_SUCCESS;
    std::lock_guard<std::mutex> lock(device.activation);
    if (device.active.load(std::memory_order_relaxed)) return HAL_SUCCESS;
    typename Api::Context context{};
    if (halError error = Api::retainContext(device.native, &context)) return error;
    device.context = context;
    device.active.store(true, std::memory_order_release);
    return HAL_SUCCESS;
}

// What every entry that acts on a device does first: opens the device if this is its first use
// and makes it current on the calling thread until the scope ends.
template <class Api>
class CurrentDevice : public ContextScope<Api> {
  public:
    explicit CurrentDevice(const Device<Api>& device) noexcept {
        this->error_ = activate(device);
        if (this->error_ == HAL_SUCCESS) this->enter(device.context);
    }
};

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_ENGINE_CURRENT_DEVICE_HPP_
