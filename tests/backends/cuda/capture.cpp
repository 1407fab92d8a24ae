// Stream capture by other code in the process, as far as the plugin meets it: while any thread
// captures in CU_STREAM_CAPTURE_MODE_GLOBAL (or the calling thread itself captures in a mode other
// than relaxed), a "potentially unsafe" call (cuStreamQuery, cuEventQuery, cuMemAlloc, the
// synchronisations) from a thread whose interaction mode is not relaxed fails with
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates that capture, whose cuStreamEndCapture then
// fails with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (CUDA Runtime API, cudaStreamBeginCapture and
// cudaThreadExchangeStreamCaptureMode; CUDA Programming Guide, "Cross-stream Dependencies and
// Events" / "Prohibited and Unhandled Operations"). A thread sets its interaction mode with
// cuThreadExchangeStreamCaptureMode (default: global).
//
// Not modelled: the work enqueued on a capturing stream runs at once instead of becoming the
// graph's nodes, so a capture here ends as an empty graph.
#include <thread>
#include <vector>

#include "driver.hpp"

namespace polyhal::doubles::cuda {
namespace {

struct Capture {
    CUstream stream;
    CUstreamCaptureMode mode;
    std::thread::id thread;
    bool invalidated;
};

std::mutex g_captureMutex;
std::vector<Capture>& g_captures = *new std::vector<Capture>();
thread_local CUstreamCaptureMode t_interaction = CU_STREAM_CAPTURE_MODE_GLOBAL;

}  // namespace

CUresult checkCaptureInteraction() {
    if (t_interaction == CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_SUCCESS;
    const std::thread::id self = std::this_thread::get_id();
    std::lock_guard<std::mutex> lock(g_captureMutex);
    bool prohibited = false;
    for (Capture& capture : g_captures) {
        const bool own = capture.thread == self;
        if ((own && capture.mode != CU_STREAM_CAPTURE_MODE_RELAXED) ||
            (!own && capture.mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
            capture.invalidated = true;
            prohibited = true;
        }
    }
    return prohibited ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

}  // namespace polyhal::doubles::cuda

using namespace polyhal::doubles::cuda;

extern "C" {

CUresult CUDAAPI cuStreamBeginCapture(CUstream handle, CUstreamCaptureMode mode) {
    ENTER();
    requireStream(__func__, handle);
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    std::lock_guard<std::mutex> lock(g_captureMutex);
    for (const Capture& capture : g_captures) {
        if (capture.stream == handle) return CUDA_ERROR_ILLEGAL_STATE;
    }
    g_captures.push_back({handle, mode, std::this_thread::get_id(), false});
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream handle, CUgraph* graph) {
    ENTER();
    if (graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *graph = nullptr;
    bool invalidated = false;
    {
        std::lock_guard<std::mutex> lock(g_captureMutex);
        auto it = g_captures.begin();
        while (it != g_captures.end() && it->stream != handle) ++it;
        if (it == g_captures.end()) return CUDA_ERROR_ILLEGAL_STATE;
        if (it->mode != CU_STREAM_CAPTURE_MODE_RELAXED &&
            it->thread != std::this_thread::get_id()) {
            return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
        }
        invalidated = it->invalidated;
        g_captures.erase(it);
    }
    if (invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    return cuGraphCreate(graph, 0);
}

CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
    ENTER();
    if (mode == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const CUstreamCaptureMode previous = t_interaction;
    t_interaction = *mode;
    *mode = previous;
    return CUDA_SUCCESS;
}

}  // extern "C"
