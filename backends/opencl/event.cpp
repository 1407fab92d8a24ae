// Events are marker commands: recording enqueues a marker and makes it the event's point.
#include "event.hpp"

#include "device.hpp"
#include "engine/cl_info.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "stream.hpp"

namespace polyhal::opencl {

Event::~Event() {
    if (marker_ != nullptr) clReleaseEvent(marker_);
}

cl_event Event::marker() const {
    std::lock_guard lock(mutex_);
    if (marker_ != nullptr) clRetainEvent(marker_);
    return marker_;
}

void Event::moveTo(cl_event marker) {
    cl_event previous = nullptr;
    {
        std::lock_guard lock(mutex_);
        previous = marker_;
        marker_ = marker;
    }
    if (previous != nullptr) clReleaseEvent(previous);
}

namespace {

// The outcome of a marker whose execution status is `status`. A negative status (the work
// before the marker failed) has ended too: the failure is the stream's to report, once, and no
// event's (plugin.h).
halError markerOutcome(cl_int status) {
    return status > 0 ? HAL_ERROR_NOT_READY : HAL_SUCCESS;
}

// When the work before `marker` had finished (its CL_PROFILING_COMMAND_END), in nanoseconds;
// HAL_ERROR_NOT_READY before then, since OpenCL has the time only once the marker completed.
halError completedAt(cl_event marker, cl_ulong* nanoseconds) {
    cl_int status = CL_COMPLETE;
    if (halError error = executionStatus(marker, &status)) return error;
    if (halError outcome = markerOutcome(status)) return outcome;
    return checkCall(clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_END, sizeof *nanoseconds,
                                             nanoseconds, nullptr),
                     "clGetEventProfilingInfo(CL_PROFILING_COMMAND_END)");
}

}  // namespace

halError eventCreate(halPluginDevice device, uint32_t /*flags*/, halPluginEvent* event) {
    *event = plugin::toHandle(new Event(plugin::fromHandle<Device>(device)));
    return HAL_SUCCESS;
}

halError eventDestroy(halPluginEvent event) {
    // A barrier already waiting holds its own reference to the marker.
    return plugin::destroyHandle<Event>(event);
}

halError eventRecord(halPluginEvent event, halPluginStream stream) {
    Stream& recording = plugin::fromHandle<Stream>(stream);
    cl_event marker = nullptr;
    const halError result = recording.submit([&](cl_event* last) {
        const cl_int error = clEnqueueMarkerWithWaitList(recording.queue(), 0, nullptr, last);
        if (error != CL_SUCCESS) return checkCall(error, "clEnqueueMarkerWithWaitList");
        marker = *last;
        clRetainEvent(marker);
        return HAL_SUCCESS;
    });
    if (result != HAL_SUCCESS) return result;
    // Another queue may wait for this marker; OpenCL requires the queue holding it to be
    // flushed for such a wait to end.
    clFlush(recording.queue());
    plugin::fromHandle<Event>(event).moveTo(marker);
    return HAL_SUCCESS;
}

halError eventQuery(halPluginEvent event) {
    return plugin::fromHandle<Event>(event).withMarker([](cl_event marker) {
        if (marker == nullptr) return HAL_SUCCESS;
        cl_int status = CL_COMPLETE;
        const halError result = executionStatus(marker, &status);
        return result != HAL_SUCCESS ? result : markerOutcome(status);
    });
}

halError eventSynchronize(halPluginEvent event) {
    cl_event marker = plugin::fromHandle<Event>(event).marker();
    if (marker == nullptr) return HAL_SUCCESS;
    cl_int status = CL_COMPLETE;
    const halError result = waitForCommand(marker, &status);
    clReleaseEvent(marker);
    return result != HAL_SUCCESS ? result : markerOutcome(status);
}

halError eventElapsedTime(float* ms, halPluginEvent start, halPluginEvent end) {
    cl_event markers[2] = {plugin::fromHandle<Event>(start).marker(),
                           plugin::fromHandle<Event>(end).marker()};
    cl_ulong nanoseconds[2] = {0, 0};
    halError result = completedAt(markers[0], &nanoseconds[0]);
    if (result == HAL_SUCCESS) result = completedAt(markers[1], &nanoseconds[1]);
    for (cl_event marker : markers) clReleaseEvent(marker);
    if (result != HAL_SUCCESS) return result;
    *ms = static_cast<float>(
        static_cast<double>(static_cast<int64_t>(nanoseconds[1] - nanoseconds[0])) / 1e6);
    return HAL_SUCCESS;
}

halError eventCompletionTime(halPluginEvent event, uint64_t* hostNanoseconds) {
    Event& timed = plugin::fromHandle<Event>(event);
    if (!timed.device().profiling()) {
        return plugin::fail(HAL_ERROR_NOT_SUPPORTED,
                            "eventCompletionTime: the device's queues cannot time commands");
    }
    cl_event marker = timed.marker();
    if (marker == nullptr) {
        return plugin::fail(HAL_ERROR_INVALID_VALUE, "eventCompletionTime: event never recorded");
    }
    cl_ulong deviceNs = 0;
    const halError result = completedAt(marker, &deviceNs);
    clReleaseEvent(marker);
    if (result != HAL_SUCCESS) return result;
    return timed.device().clock().toHost(deviceNs, hostNanoseconds);
}

}  // namespace polyhal::opencl
