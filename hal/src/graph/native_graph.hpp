// The plain description of a graph that a plugin builds its native executable from
// (halPluginGraphDesc in plugin.h), and what the core keeps alive for that executable.
#ifndef POLYHAL_HAL_SRC_GRAPH_NATIVE_GRAPH_HPP_
#define POLYHAL_HAL_SRC_GRAPH_NATIVE_GRAPH_HPP_

#include <polyhal/plugin.h>

#include <deque>
#include <memory>
#include <vector>

#include "host_function.hpp"

namespace polyhal {

struct Device;

class NativeGraphDescription {
  public:
    NativeGraphDescription();
    ~NativeGraphDescription();
    NativeGraphDescription(const NativeGraphDescription&) = delete;
    NativeGraphDescription& operator=(const NativeGraphDescription&) = delete;

    // The operations, in the order they run. Pointed-to arguments must outlive build().
    void addMemset(void* dst, unsigned char value, size_t count);
    void addCopy(void* dst, const void* src, size_t count, halMemcpyKind kind);
    void addBox(const halMemcpy3DParams& box);
    void addKernel(halPluginFunction function, halDim3 grid, halDim3 block, size_t sharedBytes,
                   const halKernelArg* args, uint32_t numArgs);
    void addHostFunction(halHostFn fn, void* userData);

    // Asks the plugin of `device` for its executable of the operations: nullptr where the plugin
    // has no native graphs or declined (logged), and the core replays the graph.
    halPluginGraph build(Device* device);

  private:
    // Appends an operation of `kind`; returns its parameters, for the caller to fill in.
    decltype(halPluginGraphOp::params)& add(halPluginGraphOpKind kind);

    std::vector<halPluginGraphOp> ops_;
    // The host functions' wrappers, which the executable uses until the plugin releases them.
    // A deque: adding one never moves the others.
    std::unique_ptr<std::deque<GraphHostCall>> hostCalls_;
};

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_GRAPH_NATIVE_GRAPH_HPP_
