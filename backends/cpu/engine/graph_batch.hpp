// A native graph of the CPU backend: its operations decoded once into the commands the eager
// calls would have queued, and run in order by one command of the launching stream's worker
// (GraphRun), so that a launch costs one queue push whatever the graph's size.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_GRAPH_BATCH_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_GRAPH_BATCH_HPP_

#include <polyhal/plugin.h>

#include <cstddef>
#include <memory>
#include <variant>

#include "engine/command.hpp"

namespace polyhal::cpu {

using BatchStep = std::variant<HostCall, CopyBytes, CopyBox, FillBytes, KernelLaunch>;

class GraphBatch {
  public:
    explicit GraphBatch(size_t size) : steps_(std::make_unique<BatchStep[]>(size)), size_(size) {}
    GraphBatch(const GraphBatch&) = delete;
    GraphBatch& operator=(const GraphBatch&) = delete;
    ~GraphBatch() {
        if (release_ != nullptr) release_(context_);
    }

    // Step `index`, filled once while the batch is built; the array never moves, so a kernel
    // launch's argument table stays where its step is.
    BatchStep& step(size_t index) { return steps_[index]; }
    size_t size() const { return size_; }

    // Has release(context) called when the batch is destroyed (halPluginGraphDesc's release).
    void releaseWith(void (*release)(void*), void* context) {
        release_ = release;
        context_ = context;
    }

  private:
    std::unique_ptr<BatchStep[]> steps_;
    size_t size_;
    void (*release_)(void*) = nullptr;
    void* context_ = nullptr;
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_GRAPH_BATCH_HPP_
