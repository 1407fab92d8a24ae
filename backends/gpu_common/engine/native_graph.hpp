// The object behind a native graph's handle, and what becomes of it when its destroy comes while
// a launch is still pending.
//
// CUDA's cuGraphExecDestroy lets the launches already enqueued complete and frees the executable
// after them. ROCm's hipGraphExecDestroy (the releases with user objects) frees a running
// executable at once and runs its user objects' destructors, the graph's release, at once too.
// Where the vendor does that (Api::kExecDestroyWaitsForLaunches false), an event is recorded after
// each launch, and a graph destroyed before its last launch's event completed is retired: the
// first of the plugin's graph entries or synchronisations that finds the event complete destroys
// the executable: never from a vendor callback, where the vendor API must not
// be called, and never blocking the caller. One event suffices: the core runs the launches of a
// graph one after another, so the last launch's completion is that of them all.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_ENGINE_NATIVE_GRAPH_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_ENGINE_NATIVE_GRAPH_HPP_

#include <atomic>
#include <memory>
#include <mutex>

#include "gpu_common/engine/kept_list.hpp"
#include "gpu_common/engine/objects.hpp"
#include "gpu_common/engine/vendor_call.hpp"

namespace polyhal::gpu {

template <class Api>
struct NativeGraph {
    using Handle = halPluginGraph;
    const Device<Api>* device;
    typename Api::GraphExec native{};
    // Recorded after each launch where the vendor frees a running executable (made with the
    // executable); null on the other vendors.
    typename Api::Event lastLaunch{};
    // The next in RetiredGraphs' list.
    NativeGraph* nextRetired = nullptr;
};

// Destroys the executable and its event; neither call needs a current device, so a reap runs it
// from whichever entry finds the last launch complete.
template <class Api>
halError destroyNativeGraph(std::unique_ptr<NativeGraph<Api>> graph) noexcept {
    const halError destroyed = call<Api>(Api::symbols.graphExecDestroy, graph->native);
    if (graph->lastLaunch != nullptr) (void)Api::symbols.eventDestroy.address(graph->lastLaunch);
    return destroyed;
}

// The graphs destroyed before their last launch completed, plugin-wide.
template <class Api>
class RetiredGraphs {
  public:
    static void add(std::unique_ptr<NativeGraph<Api>> graph) noexcept {
        const std::lock_guard<std::mutex> lock(mutex_);
        graph->nextRetired = head_;
        head_ = graph.release();
        pending_.store(true, std::memory_order_release);
    }

    // Destroys each retired graph whose last launch has completed; one load when none is
    // retired. Only a successful query counts: clr's hipEventQuery also fails while another
    // library captures in global mode, with the launch still running. The destroys run after the
    // lock is let go (ROCm runs the graph's release inside them), and a thread that finds another
    // reaping leaves the work to it.
    static void reap() noexcept {
        if (!pending_.load(std::memory_order_acquire)) return;
        NativeGraph<Api>* completed = nullptr;
        {
            const std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
            if (!lock.owns_lock()) return;
            completed = unlinkWhere(&head_, &NativeGraph<Api>::nextRetired, [](const auto& graph) {
                return Api::symbols.eventQuery.address(graph.lastLaunch) == Api::kSuccess;
            });
            pending_.store(head_ != nullptr, std::memory_order_release);
        }
        // Nothing to report a failure to: the destroy that retired the graph has returned.
        releaseEach(completed, &NativeGraph<Api>::nextRetired, [](NativeGraph<Api>* graph) {
            (void)destroyNativeGraph(std::unique_ptr<NativeGraph<Api>>(graph));
        });
    }

    // At a device's close: waits for the last launch of each of its retired graphs and destroys
    // them, with the device current.
    static void closeDevice(const Device<Api>* device) noexcept {
        NativeGraph<Api>* closing = nullptr;
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            closing = unlinkWhere(&head_, &NativeGraph<Api>::nextRetired,
                                  [device](const auto& graph) { return graph.device == device; });
            pending_.store(head_ != nullptr, std::memory_order_release);
        }
        releaseEach(closing, &NativeGraph<Api>::nextRetired, [](NativeGraph<Api>* graph) {
            (void)Api::symbols.eventSynchronize.address(graph->lastLaunch);
            (void)destroyNativeGraph(std::unique_ptr<NativeGraph<Api>>(graph));
        });
    }

  private:
    static inline std::mutex mutex_;
    static inline NativeGraph<Api>* head_ = nullptr;
    static inline std::atomic<bool> pending_{false};
};

// What the reaping entries call (graph.hpp, and the synchronisations of device.hpp, stream.hpp
// and event.hpp): nothing at all where the vendor's destroy waits for the launches itself.
template <class Api>
inline void reapRetiredGraphs() noexcept {
    if constexpr (!Api::kExecDestroyWaitsForLaunches) RetiredGraphs<Api>::reap();
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_ENGINE_NATIVE_GRAPH_HPP_
