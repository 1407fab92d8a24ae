// Streams are in-order OpenCL command queues.
#include "stream.hpp"

#include <CL/cl_ext.h>

#include <algorithm>
#include <iterator>
#include <vector>

#include "cl_info.hpp"
#include "device.hpp"
#include "entries.hpp"
#include "error.hpp"
#include "event.hpp"

halPluginStream_t::~halPluginStream_t() {
    if (last_ != nullptr) clReleaseEvent(last_);
    if (queue != nullptr) clReleaseCommandQueue(queue);
}

polyhal::opencl::HostFuncThread& halPluginStream_t::hostFuncThread() {
    if (!hostFuncs_) hostFuncs_ = std::make_unique<polyhal::opencl::HostFuncThread>();
    return *hostFuncs_;
}

halError halPluginStream_t::query() {
    {
        std::lock_guard lock(mutex_);
        if (last_ == nullptr) return HAL_SUCCESS;
        cl_int status = CL_COMPLETE;
        if (halError error = polyhal::opencl::executionStatus(last_, &status)) return error;
        if (status == CL_COMPLETE) return HAL_SUCCESS;
        if (status < 0) return reportFailure(status, sequence_);
    }
    // OpenCL starts commands for certain only once they are flushed; a caller polling the
    // stream relies on them starting.
    clFlush(queue);
    return HAL_ERROR_NOT_READY;
}

halError halPluginStream_t::waitForLast(cl_int* status, uint64_t* sequence) {
    cl_event last = nullptr;
    {
        std::lock_guard lock(mutex_);
        *status = CL_COMPLETE;
        *sequence = sequence_;
        if (last_ == nullptr) return HAL_SUCCESS;
        last = last_;
        clRetainEvent(last);
    }
    clFlush(queue);
    const halError result = polyhal::opencl::waitForCommand(last, status);
    clReleaseEvent(last);
    return result;
}

halError halPluginStream_t::synchronize() {
    cl_int status = CL_COMPLETE;
    uint64_t sequence = 0;
    if (halError error = waitForLast(&status, &sequence)) return error;
    if (status >= 0) return HAL_SUCCESS;
    std::lock_guard lock(mutex_);
    return reportFailure(status, sequence);
}

halError halPluginStream_t::waitIdle() {
    cl_int status = CL_COMPLETE;
    uint64_t sequence = 0;
    return waitForLast(&status, &sequence);
}

halError halPluginStream_t::reportFailure(cl_int status, uint64_t sequence) {
    if (sequence == reportedSequence_) return HAL_SUCCESS;
    reportedSequence_ = sequence;
    return polyhal::plugin::fail(HAL_ERROR_LAUNCH_FAILED, "work on the stream failed: %s (%d)",
                                 polyhal::opencl::errorName(status), status);
}

namespace polyhal::opencl {

namespace {

// Maps polyhal's priority, clamped by the core to the range deviceGetInfo reports (-1 highest,
// 1 lowest), to cl_khr_priority_hints.
cl_queue_priority_khr priorityHint(int priority) {
    if (priority < 0) return CL_QUEUE_PRIORITY_HIGH_KHR;
    if (priority > 0) return CL_QUEUE_PRIORITY_LOW_KHR;
    return CL_QUEUE_PRIORITY_MED_KHR;
}

void CL_CALLBACK completeStandIn(cl_event, cl_int status, void* standIn) {
    auto event = static_cast<cl_event>(standIn);
    clSetUserEventStatus(event, status < 0 ? status : CL_COMPLETE);
    clReleaseEvent(event);
}

// A user event of the stream's context that completes when `foreign`, a command of another
// context (a device of another platform), does: OpenCL cannot wait for the foreign event itself.
halError standInFor(cl_event foreign, cl_context context, cl_event* standIn) {
    cl_int error = CL_SUCCESS;
    cl_event event = clCreateUserEvent(context, &error);
    if (event == nullptr) return checkCall(error, "clCreateUserEvent");
    clRetainEvent(event);  // the callback's reference
    error = clSetEventCallback(foreign, CL_COMPLETE, completeStandIn, event);
    if (error != CL_SUCCESS) {
        clReleaseEvent(event);
        clReleaseEvent(event);
        return checkCall(error, "clSetEventCallback");
    }
    *standIn = event;
    return HAL_SUCCESS;
}

}  // namespace

halError streamCreate(halPluginDevice device, int priority, uint32_t, halPluginStream* stream) {
    return guard("streamCreate", [&] {
        cl_queue_properties properties[5] = {0};
        size_t next = 0;
        if (device->profiling) {
            properties[next++] = CL_QUEUE_PROPERTIES;
            properties[next++] = CL_QUEUE_PROFILING_ENABLE;
        }
        if (device->priorityHints) {
            properties[next++] = CL_QUEUE_PRIORITY_KHR;
            properties[next++] = priorityHint(priority);
        }
        auto created = std::make_shared<halPluginStream_t>(device);
        cl_int error = CL_SUCCESS;
        created->queue =
            clCreateCommandQueueWithProperties(device->context, device->id, properties, &error);
        if (created->queue == nullptr) {
            return checkCall(error, "clCreateCommandQueueWithProperties");
        }
        std::lock_guard lock(device->streamsMutex);
        device->streams.emplace(created.get(), created);
        *stream = created.get();
        return HAL_SUCCESS;
    });
}

halError streamDestroy(halPluginStream stream) {
    std::vector<std::shared_ptr<halPluginStream_t>> released;  // destroyed after the lock
    halPluginDevice device = stream->device;
    std::lock_guard lock(device->streamsMutex);
    auto found = device->streams.find(stream);
    device->retiring.push_back(std::move(found->second));
    device->streams.erase(found);
    // A destroyed stream's failure has no one left to report it to: query only tells idle.
    auto idle = std::partition(device->retiring.begin(), device->retiring.end(),
                               [](const auto& retired) {
                                   return retired->query() == HAL_ERROR_NOT_READY;
                               });
    std::move(idle, device->retiring.end(), std::back_inserter(released));
    device->retiring.erase(idle, device->retiring.end());
    return HAL_SUCCESS;
}

halError streamSynchronize(halPluginStream stream) { return stream->synchronize(); }

halError streamQuery(halPluginStream stream) { return stream->query(); }

halError streamWaitEvent(halPluginStream stream, halPluginEvent event) {
    cl_event marker = event->marker();
    if (marker == nullptr) return HAL_SUCCESS;
    cl_event waitFor = marker;
    halError result = HAL_SUCCESS;
    if (event->device->context != stream->device->context) {
        result = standInFor(marker, stream->device->context, &waitFor);
        clReleaseEvent(marker);
        if (result != HAL_SUCCESS) return result;
    }
    result = stream->submit([&](cl_event* last) {
        return checkCall(clEnqueueBarrierWithWaitList(stream->queue, 1, &waitFor, last),
                         "clEnqueueBarrierWithWaitList");
    });
    clReleaseEvent(waitFor);
    return result;
}

halError streamGetNativeHandle(halPluginStream stream, void** native) {
    *native = stream->queue;
    return HAL_SUCCESS;
}

}  // namespace polyhal::opencl
