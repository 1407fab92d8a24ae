// Graphs as the CUDA and HIP documentation describe them, shared by both doubles: a graph is a
// list of nodes, each added after the nodes it depends on; instantiating it snapshots the nodes
// into an executable, which later changes to the graph leave alone; a launch runs every node's
// work on a stream's timeline in an order that respects the dependencies (the order they were
// added in), after what the stream already holds, as the eager calls would. User objects tie a
// resource's lifetime to graphs and executables: retained by a graph, referenced by each
// executable made from it and by each launch until it has completed; the last reference's release
// runs the destructor, asynchronously, on the driver's host-function thread.
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_GRAPH_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_GRAPH_HPP_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "address_space.hpp"
#include "handles.hpp"
#include "timeline.hpp"

namespace polyhal::doubles {

class UserObject {
  public:
    // Registered in `handles` as `kind` until its last reference is released.
    UserObject(void (*destroy)(void*), void* data, unsigned references, HandleRegistry& handles,
               const char* kind);
    void retain(unsigned count) { references_.fetch_add(count); }
    // The release of the last reference queues the destructor and deletes the object. False,
    // and nothing released, when it holds fewer than `count`.
    bool release(unsigned count);
    // The application's own references (those it created the object with and has not moved to a
    // graph): a release or a move by the application takes from these. False, and nothing taken,
    // when it holds fewer than `count`.
    bool releaseOwn(unsigned count);
    bool moveOwn(unsigned count);

  private:
    bool takeOwn(unsigned count);

    void (*destroy_)(void*);
    void* data_;
    std::atomic<unsigned> references_;
    std::atomic<unsigned> own_;
    HandleRegistry& handles_;
};

// What a node does when a launch reaches it: submits its work to the launch's stream.
using NodeWork = std::function<void(Stream&)>;

struct GraphNode {
    NodeWork work;
    int device;  // whose work it is (a kernel's, a copy's or a fill's); -1: a host node
};

// The work of the nodes both vendors have. A node stages nothing: a copy reads and writes its
// ends when it runs, whatever memory they lie in.
NodeWork copyNodeWork(const Place& to, size_t toPitch, const Place& from, size_t fromPitch,
                      size_t width, size_t height);
// `depth` slices of `height` rows of `width` bytes; slices start `toSliceRows` and
// `fromSliceRows` rows apart.
NodeWork boxNodeWork(const Place& to, size_t toPitch, size_t toSliceRows, const Place& from,
                     size_t fromPitch, size_t fromSliceRows, size_t width, size_t height,
                     size_t depth);
NodeWork fillNodeWork(const Place& to, unsigned char value, size_t count);
// On the driver's host-function thread, as a host function of the stream.
NodeWork hostNodeWork(void (*fn)(void*), void* userData);

class GraphExecutable;

class Graph {
  public:
    Graph() = default;
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    // Releases the user objects it retains.
    ~Graph();

    // "" and the new node, or what is wrong with the dependencies (a node of another graph,
    // one listed twice).
    std::string add(GraphNode node, const GraphNode* const* dependencies, size_t count,
                    GraphNode** added);
    // Takes over (move) or adds `count` references of `object`; false, and nothing retained,
    // when a move asks for more references than the application holds.
    bool retain(UserObject* object, unsigned count, bool move);
    size_t size() const;
    // The snapshot: the nodes' work in a valid order and a reference on each retained object.
    std::shared_ptr<GraphExecutable> instantiate() const;

  private:
    bool owns(const GraphNode* node) const;

    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<GraphNode>> nodes_;
    std::vector<std::pair<UserObject*, unsigned>> retained_;
};

class GraphExecutable {
  public:
    GraphExecutable(std::vector<GraphNode> nodes,
                    std::vector<std::pair<UserObject*, unsigned>> references);
    GraphExecutable(const GraphExecutable&) = delete;
    GraphExecutable& operator=(const GraphExecutable&) = delete;
    // Once the handle is destroyed and every launch has completed: releases its references.
    ~GraphExecutable();

    // A node whose work belongs to another device than `device`, or -1.
    int foreignNode(int device) const;
    // Whether a launch has not completed yet.
    bool running() const;
    // Submits every node's work to `stream`, after the executable's previous launch (on
    // whichever stream that ran); the launch keeps `self` until it has completed.
    static void launch(const std::shared_ptr<GraphExecutable>& self, Stream& stream);

  private:
    mutable std::mutex mutex_;
    std::shared_ptr<Marker> lastLaunch_;
    const std::vector<GraphNode> nodes_;
    const std::vector<std::pair<UserObject*, unsigned>> references_;
};

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_GRAPH_HPP_
