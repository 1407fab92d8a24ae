// A graph: the commands a capture recorded (command.hpp), each holding its arguments by value. A
// launch runs them as the plugin's native executable where the plugin built one
// (halPluginGraphDesc), and otherwise replays them on its stream through the plugin as the eager
// calls would have enqueued them.
#ifndef POLYHAL_HAL_SRC_GRAPH_GRAPH_HPP_
#define POLYHAL_HAL_SRC_GRAPH_GRAPH_HPP_

#include <memory>
#include <vector>

#include "command.hpp"

namespace polyhal {

// What a capture produced: immutable once built, shared by the graph handle and by the graphs
// that captured a launch of it. Releases its graph-owned memory when the last owner goes.
class GraphBody {
  public:
    GraphBody(Device* device, CommandList commands, std::vector<void*> ownedMemory);
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
    // Enqueues every command on `stream`; stops at the first the plugin refuses.
    halError replay(halStream_t* stream) const;
    // Appends the commands, flattened, to `description`.
    void describe(NativeGraphDescription* description) const;
    const Footprint& footprint() const { return footprint_; }
    // Is every kernel it launches still the function it captured (its module loaded)?
    bool kernelsLive() const { return firstGoneKernel() == nullptr; }
    // Does the graph own memory (halMallocAsync in its capture)?
    bool ownsMemory() const { return !ownedMemory_.empty(); }
    size_t size() const { return commands_.size(); }

  private:
    // The first kernel whose function is gone or names another function now; null if none.
    const KernelRef* firstGoneKernel() const;

    Device* device_;
    CommandList commands_;
    Footprint footprint_;
    std::vector<void*> ownedMemory_;
    halPluginGraph native_ = nullptr;
};

// Launches `graph` on `stream` as one operation of the stream, after its previous launch.
halError launchGraph(halGraph_t* graph, halStream_t* stream, const char* operation);

// Destroys the handle; launches already enqueued complete, and the body (with its memory) goes
// once no capture holds it. It does not take launchMutex: hal.h makes the application order
// halGraphDestroy after every halGraphLaunch of the graph, as cudaGraphDestroy does.
halError destroyGraph(halGraph_t* graph, const char* operation);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_GRAPH_GRAPH_HPP_
