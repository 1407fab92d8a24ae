// Stream capture and graphs: capture begun and ended, graphs launched and destroyed.
#include "graph/capture.hpp"

using namespace polyhal;

namespace {

halError resolveGraph(halGraph handle, halGraph_t** graph, const char* operation) {
    halGraph_t* object = runtime().graphs.validate(handle);
    if (object == nullptr) {
        return fail(HAL_ERROR_INVALID_HANDLE,
                    "{}: graph {} is not a live graph (NULL, destroyed, or not made by "
                    "halStreamEndCapture)",
                    operation, static_cast<const void*>(handle));
    }
    *graph = object;
    return HAL_SUCCESS;
}

}  // namespace

extern "C" {

HAL_API halError halStreamBeginCapture(halStream handle, halCaptureMode mode) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        const uint32_t modeBits = enumBits(mode);
        if (modeBits > HAL_CAPTURE_MODE_RELAXED) {
            return fail(HAL_ERROR_INVALID_VALUE, "{}: unknown capture mode {}", op, modeBits);
        }
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, op)) return e;
        if (stream == stream->device->defaultStream.load(std::memory_order_acquire)) {
            return fail(HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                        "{}: the default stream cannot be captured; capture a stream made by "
                        "halCreateStream",
                        op);
        }
        return beginCapture(stream, static_cast<halCaptureMode>(modeBits), op);
    });
}

HAL_API halError halStreamEndCapture(halStream handle, halGraph* graph) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (halError e = requireOutput(graph, op, "graph")) return e;
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, op)) return e;
        return endCapture(stream, graph, op);
    });
}

HAL_API halError halStreamGetCaptureInfo(halStream handle, halCaptureStatus* status) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (halError e = requireOutput(status, op, "status")) return e;
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, op)) return e;
        *status = captureStatus(stream);
        return HAL_SUCCESS;
    });
}

HAL_API halError halGraphLaunch(halGraph graphHandle, halStream streamHandle) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        halGraph_t* graph = nullptr;
        halStream_t* stream = nullptr;
        if (halError e = resolveGraph(graphHandle, &graph, op)) return e;
        if (halError e = resolveStream(streamHandle, &stream, op)) return e;
        if (graph->device != stream->device) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "{}: the graph was captured on device {}, the stream belongs to device {}",
                        op, graph->device->ordinal, stream->device->ordinal);
        }
        if (capturing(stream)) {
            if (graph->body->ownsMemory()) {
                // Replayed inside another graph, its operations would bypass the ordering of
                // its own launches, and two graphs would write its memory at once.
                return refuseInCapture(stream, op,
                                       "the graph owns memory (halMallocAsync in its capture), "
                                       "and a launch of it cannot be captured");
            }
            if (halError e = graph->body->checkLive(op)) return e;
            return captureCommand(stream, GraphCommand{graph->body}, op);
        }
        return launchGraph(graph, stream, op);
    });
}

HAL_API halError halGraphDestroy(halGraph handle) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        halGraph_t* graph = nullptr;
        if (halError e = resolveGraph(handle, &graph, op)) return e;
        return destroyGraph(graph, op);
    });
}

}  // extern "C"
