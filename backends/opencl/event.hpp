// The backend's event: the marker command of its latest record.
#ifndef POLYHAL_OPENCL_EVENT_HPP_
#define POLYHAL_OPENCL_EVENT_HPP_

#include <CL/cl.h>
#include <polyhal/plugin.h>

#include <mutex>

struct halPluginEvent_t {
    explicit halPluginEvent_t(halPluginDevice device) : device(device) {}
    ~halPluginEvent_t();
    halPluginEvent_t(const halPluginEvent_t&) = delete;
    halPluginEvent_t& operator=(const halPluginEvent_t&) = delete;

    // The marker of the latest record, retained for the caller, who releases it; nullptr when
    // never recorded. A snapshot: recording again later does not move waits built from it.
    cl_event marker() const;
    // Makes `marker` (a reference the event takes over) the event's point.
    void moveTo(cl_event marker);

    halPluginDevice device;

private:
    mutable std::mutex mutex_;
    cl_event marker_ = nullptr;
};

#endif  // POLYHAL_OPENCL_EVENT_HPP_
