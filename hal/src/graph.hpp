// A graph: the operations a capture recorded, each holding its arguments by value. A launch runs
// them as the plugin's native executable where the plugin built one (halPluginGraphDesc), and
// otherwise replays them on its stream through the plugin as the eager calls would have
// enqueued them.
#ifndef POLYHAL_HAL_SRC_GRAPH_HPP_
#define POLYHAL_HAL_SRC_GRAPH_HPP_

#include <memory>
#include <vector>

#include "api.hpp"

namespace polyhal {

class NativeGraphDescription;

// A kernel a graph launches: the handle and the serial of the function it held at capture.
struct KernelRef {
    const halFunction_t* function;
    uint64_t serial;
};

// What a graph's operations touch and need, gathered once when the graph is built.
struct GraphFootprint {
    std::vector<check::Access> accesses;  // what they read and write: the pool's uses, the checks'
    std::vector<KernelRef> kernels;       // the functions, checked before each launch
};

// One captured operation.
class GraphOp {
  public:
    virtual ~GraphOp() = default;
    // Enqueues the operation on `stream` (of the capture's device) through its plugin; returns
    // the plugin's result, unadopted.
    virtual halError enqueue(halStream_t* stream) const = 0;
    // Adds what the operation touches and needs.
    virtual void addFootprint(GraphFootprint* footprint) const { (void)footprint; }
    // Appends the operation to the description of a native graph.
    virtual void describe(NativeGraphDescription* description) const = 0;
};

// What a capture produced: immutable once built, shared by the graph handle and by the graphs
// that captured a launch of it. Releases its graph-owned memory when the last owner goes.
class GraphBody {
  public:
    GraphBody(Device* device, std::vector<std::unique_ptr<GraphOp>> ops,
              std::vector<void*> ownedMemory);
    GraphBody(const GraphBody&) = delete;
    GraphBody& operator=(const GraphBody&) = delete;
    ~GraphBody();

    // Fails, with a message, where a kernel's module was unloaded since the capture.
    halError checkLive(const char* operation) const;
    // Asks the plugin to build its native executable of the graph (halStreamEndCapture does,
    // once); where it declines, launches replay the operations.
    void buildNative();
    bool native() const { return native_ != nullptr; }
    // Enqueues the graph on `stream`: one launch of the native executable, or the replay.
    halError enqueue(halStream_t* stream) const;
    // Enqueues every operation on `stream`; stops at the first the plugin refuses.
    halError replay(halStream_t* stream) const;
    // Appends the operations, flattened, to `description`.
    void describe(NativeGraphDescription* description) const;
    const GraphFootprint& footprint() const { return footprint_; }
    // Is every kernel it launches still the function it captured (its module loaded)?
    bool kernelsLive() const { return firstGoneKernel() == nullptr; }
    // Does the graph own memory (halMallocAsync in its capture)?
    bool ownsMemory() const { return !ownedMemory_.empty(); }
    size_t size() const { return ops_.size(); }

  private:
    // The first kernel whose function is gone or names another function now; null if none.
    const KernelRef* firstGoneKernel() const;

    Device* device_;
    std::vector<std::unique_ptr<GraphOp>> ops_;
    GraphFootprint footprint_;
    std::vector<void*> ownedMemory_;
    halPluginGraph native_ = nullptr;
};

// Operations of each captured kind, with their arguments by value.
std::unique_ptr<GraphOp> makeMemsetOp(void* dst, unsigned char value, size_t count);
std::unique_ptr<GraphOp> makeCopyOp(void* dst, const void* src, size_t count, halMemcpyKind kind);
std::unique_ptr<GraphOp> makeBoxOp(const halMemcpy3DParams& box);
// `uses` as the launch declared them (none: every argument read and written).
std::unique_ptr<GraphOp> makeKernelOp(const halFunction_t* function, halDim3 grid, halDim3 block,
                                      size_t sharedBytes, const halKernelArg* args,
                                      check::ArgUses uses, uint32_t numArgs);
std::unique_ptr<GraphOp> makeHostFunctionOp(halHostFn fn, void* userData);
std::unique_ptr<GraphOp> makeGraphOp(std::shared_ptr<const GraphBody> body);

// Launches `graph` on `stream` as one operation of the stream, after its previous launch.
halError launchGraph(halGraph_t* graph, halStream_t* stream, const char* operation);

// Destroys the handle; launches already enqueued complete, and the body (with its memory) goes
// once no capture holds it. It does not take launchMutex: hal.h makes the application order
// halGraphDestroy after every halGraphLaunch of the graph, as cudaGraphDestroy does.
halError destroyGraph(halGraph_t* graph, const char* operation);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_GRAPH_HPP_
