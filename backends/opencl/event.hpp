// The backend's event: the marker command of its latest record.
#ifndef POLYHAL_BACKENDS_OPENCL_EVENT_HPP_
#define POLYHAL_BACKENDS_OPENCL_EVENT_HPP_

#include <CL/cl.h>
#include <polyhal/plugin.h>

#include <mutex>

namespace polyhal::opencl {

class Device;

// What halPluginEvent points to.
class Event {
  public:
    using Handle = halPluginEvent;

    explicit Event(Device& device) : device_(device) {}
    ~Event();
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;

    Device& device() const { return device_; }

    // The marker of the latest record, retained for the caller, who releases it; nullptr when
    // never recorded. A snapshot: recording again later does not move waits built from it.
    cl_event marker() const;
    // Calls `use` with the marker of the latest record (nullptr when never recorded) while no
    // record can move it, and returns what `use` returns: what marker() does without retaining
    // and releasing the marker, two calls that take the OpenCL implementation's locks. `use` must
    // not block.
    template <typename Use>
    auto withMarker(Use&& use) const {
        std::lock_guard lock(mutex_);
        return use(marker_);
    }
    // Makes `marker` (a reference the event takes over) the event's point.
    void moveTo(cl_event marker);

  private:
    Device& device_;
    mutable std::mutex mutex_;
    cl_event marker_ = nullptr;
};

}  // namespace polyhal::opencl

#endif  // POLYHAL_BACKENDS_OPENCL_EVENT_HPP_
