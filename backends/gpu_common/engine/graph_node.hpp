// What the shared graph code (graph.hpp) asks of a vendor's Api: the kind of memory a pointer
// is (Api::memoryKind), and one node of the vendor's graph for each request (Api::addNode).
#ifndef POLYHAL_BACKENDS_GPU_COMMON_ENGINE_GRAPH_NODE_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_ENGINE_GRAPH_NODE_HPP_

#include <polyhal/plugin.h>

#include <cstddef>
#include <variant>

namespace polyhal::gpu {

enum class MemoryKind {
    kDevice,
    kPageLocked,  // host memory the vendor allocated or registered
    kPageable,    // host memory the vendor does not know (HIP counts managed memory here too)
};

constexpr const char* describe(MemoryKind kind) noexcept {
    switch (kind) {
    case MemoryKind::kDevice: return "device memory";
    case MemoryKind::kPageLocked: return "page-locked host memory";
    case MemoryKind::kPageable: return "pageable host memory";
    }
    return "unknown memory";
}

// One row of bytes set to `value`.
struct MemsetRow {
    void* dst;
    unsigned char value;
    size_t bytes;
};

// `height` rows of `width` bytes, row starts `dstPitch` and `srcPitch` bytes apart; a 1-D copy
// is one row.
struct CopyRows {
    void* dst;
    size_t dstPitch;
    const void* src;
    size_t srcPitch;
    size_t width;
    size_t height;
    halMemcpyKind kind;
};

// A launch already checked as the eager launch checks it; `params` as the vendor's kernelParams.
struct KernelLaunch {
    halPluginFunction function;
    halDim3 grid;
    halDim3 block;
    size_t dynamicSharedBytes;
    void** params;
};

using NodeRequest = std::variant<MemsetRow, CopyRows, KernelLaunch>;

// Where a node goes: into `graph`, after `after` (nullptr: none), for the device whose context
// (CUDA) is `context`.
template <class Api>
struct NodeSite {
    typename Api::Graph graph;
    const typename Api::GraphNode* after;
    typename Api::Context context;
    size_t dependencies() const noexcept { return after != nullptr ? 1 : 0; }
};

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_ENGINE_GRAPH_NODE_HPP_
