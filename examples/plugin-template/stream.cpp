// Streams: a command queue per stream, run in order by one worker thread per stream. With a real
// runtime, streamCreate would create the vendor's queue and each enqueue below would be one
// vendor call; the worker thread and the Timeline would go away.
#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "device.hpp"
#include "entries.hpp"
#include "event.hpp"

namespace polyhal_template {

namespace {

// The worker of one stream: runs its queue until the stream is destroyed and the queue drained,
// then lets the device forget the queue.
void runWorker(Device& device, std::shared_ptr<CommandQueue> queue) {
    queue->run();
    std::lock_guard<std::mutex> lock(device.mutex);
    // A destroyed stream's failure is the device's now: deviceSynchronize reports it.
    if (std::string failure = queue->takeFailure(); !failure.empty()) {
        device.unreportedFailures.push_back(std::move(failure));
    }
    auto& queues = device.queues;
    queues.erase(std::find(queues.begin(), queues.end(), queue));
    // Notified under the lock: once deviceClose sees no queue left it may delete the device.
    device.workerExited.notify_all();
}

}  // namespace

halError reportFailure(const std::string& failure) {
    if (failure.empty()) return HAL_SUCCESS;
    return fail(HAL_ERROR_LAUNCH_FAILED, "%s", failure.c_str());
}

// Priorities: the template reports the range 0..0, so `priority` is always 0. A runtime with
// priorities would pass it to its queue creation here.
halError streamCreate(halPluginDevice deviceHandle, int /*priority*/, uint32_t /*flags*/,
                      halPluginStream* out) {
    Device& device = fromHandle<Device>(deviceHandle);
    auto stream = std::make_unique<Stream>();
    stream->device = &device;
    stream->queue = std::make_shared<CommandQueue>();
    {
        std::lock_guard<std::mutex> lock(device.mutex);
        device.queues.push_back(stream->queue);
        try {
            std::thread(runWorker, std::ref(device), stream->queue).detach();
        } catch (...) {
            device.queues.pop_back();
            throw;
        }
    }
    *out = toHandle(stream.release());
    return HAL_SUCCESS;
}

// Must not wait for the queued work: the worker still runs it, then exits on its own.
halError streamDestroy(halPluginStream handle) {
    Stream& stream = fromHandle<Stream>(handle);
    stream.queue->close();
    delete &stream;
    return HAL_SUCCESS;
}

// A kernel that faulted is reported here, once, after the stream is idle. A runtime returns the
// stream's pending error its own synchronisation call reports (cuStreamSynchronize).
halError streamSynchronize(halPluginStream stream) {
    CommandQueue& queue = *fromHandle<Stream>(stream).queue;
    queue.synchronize();
    return reportFailure(queue.takeFailure());
}

// A failure may be reported before the stream is idle; the core then asks again.
halError streamQuery(halPluginStream stream) {
    CommandQueue& queue = *fromHandle<Stream>(stream).queue;
    if (const halError failed = reportFailure(queue.takeFailure()); failed != HAL_SUCCESS) {
        return failed;
    }
    return queue.idle() ? HAL_SUCCESS : HAL_ERROR_NOT_READY;
}

// The host does not block: the worker does, when it reaches the wait.
halError streamWaitEvent(halPluginStream stream, halPluginEvent event) {
    std::shared_ptr<Marker> marker = fromHandle<Event>(event).lastRecord();
    if (marker == nullptr) return HAL_SUCCESS;  // never recorded: no wait
    fromHandle<Stream>(stream).queue->submit(
        [marker] { marker->timeline->waitFor(marker->ticket); });
    return HAL_SUCCESS;
}

// Runs on the stream's worker thread, in stream order (HAL_DEVICE_CAP_HOST_FUNCTIONS). A runtime
// would use its host-callback call (cuLaunchHostFunc, clSetEventCallback) here.
halError launchHostFunc(halPluginStream stream, halHostFn fn, void* userData) {
    fromHandle<Stream>(stream).queue->submit([fn, userData] { fn(userData); });
    return HAL_SUCCESS;
}

// HAL_DEVICE_CAP_NATIVE_HANDLES: a runtime returns its own queue handle (CUstream, ...).
halError streamGetNativeHandle(halPluginStream stream, void** native) {
    *native = &fromHandle<Stream>(stream);
    return HAL_SUCCESS;
}

}  // namespace polyhal_template
