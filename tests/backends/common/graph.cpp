#include "graph.hpp"

#include <algorithm>

namespace polyhal::doubles {
namespace {

// Where destructors are queued: never on the thread whose release was the last, which may be
// the application's (the vendors run them asynchronously, on a thread of their own).
Stream& destructorQueue() {
    static auto* queue = new Stream();  // never destroyed: releases may come while exiting
    return *queue;
}

}  // namespace

NodeWork copyNodeWork(const Place& to, size_t toPitch, const Place& from, size_t fromPitch,
                      size_t width, size_t height) {
    return [=](Stream& stream) {
        stream.submit([=] { copyRows(to.host, toPitch, from.host, fromPitch, width, height); });
    };
}

NodeWork boxNodeWork(const Place& to, size_t toPitch, size_t toSliceRows, const Place& from,
                     size_t fromPitch, size_t fromSliceRows, size_t width, size_t height,
                     size_t depth) {
    std::vector<NodeWork> slices;
    for (size_t slice = 0; slice < depth; ++slice) {
        Place sliceTo = to;
        Place sliceFrom = from;
        sliceTo.host = static_cast<unsigned char*>(to.host) + slice * toSliceRows * toPitch;
        sliceFrom.host = static_cast<unsigned char*>(from.host) + slice * fromSliceRows * fromPitch;
        slices.push_back(copyNodeWork(sliceTo, toPitch, sliceFrom, fromPitch, width, height));
    }
    return [slices = std::move(slices)](Stream& stream) {
        for (const NodeWork& slice : slices) slice(stream);
    };
}

NodeWork fillNodeWork(const Place& to, unsigned char value, size_t count) {
    return [=](Stream& stream) { submitFill(stream, to, value, count); };
}

NodeWork hostNodeWork(void (*fn)(void*), void* userData) {
    return [=](Stream& stream) { stream.submitHostFunction(fn, userData); };
}

UserObject::UserObject(void (*destroy)(void*), void* data, unsigned references,
                       HandleRegistry& handles, const char* kind)
    : destroy_(destroy), data_(data), references_(references), own_(references), handles_(handles) {
    handles_.add(this, kind);
}

bool UserObject::release(unsigned count) {
    unsigned held = references_.load();
    do {
        if (held < count) return false;
    } while (!references_.compare_exchange_weak(held, held - count));
    if (held != count) return true;
    handles_.remove(this);
    destructorQueue().submit(
        [destroy = destroy_, data = data_] { runOnHostFunctionThread(destroy, data); });
    delete this;
    return true;
}

bool UserObject::takeOwn(unsigned count) {
    unsigned held = own_.load();
    do {
        if (held < count) return false;
    } while (!own_.compare_exchange_weak(held, held - count));
    return true;
}

bool UserObject::releaseOwn(unsigned count) {
    return takeOwn(count) && release(count);
}

bool UserObject::moveOwn(unsigned count) {
    return takeOwn(count);
}

Graph::~Graph() {
    for (const auto& [object, count] : retained_) object->release(count);
}

bool Graph::owns(const GraphNode* node) const {
    return std::any_of(nodes_.begin(), nodes_.end(),
                       [node](const auto& owned) { return owned.get() == node; });
}

std::string Graph::add(GraphNode node, const GraphNode* const* dependencies, size_t count,
                       GraphNode** added) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < count; ++i) {
        if (!owns(dependencies[i])) {
            return "dependency " + std::to_string(i) + " is not a node of this graph";
        }
        if (std::find(dependencies, dependencies + i, dependencies[i]) != dependencies + i) {
            return "dependency " + std::to_string(i) + " is listed twice";
        }
    }
    nodes_.push_back(std::make_unique<GraphNode>(std::move(node)));
    *added = nodes_.back().get();
    return "";
}

bool Graph::retain(UserObject* object, unsigned count, bool move) {
    if (move) {
        if (!object->moveOwn(count)) return false;
    } else {
        object->retain(count);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    retained_.emplace_back(object, count);
    return true;
}

size_t Graph::size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return nodes_.size();
}

// Nodes are added after their dependencies, so the order of addition is a valid order to run
// them in; the vendors may run independent nodes in any order, this one included.
std::shared_ptr<GraphExecutable> Graph::instantiate() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<GraphNode> nodes;
    nodes.reserve(nodes_.size());
    for (const auto& node : nodes_) nodes.push_back(*node);
    for (const auto& [object, count] : retained_) object->retain(1);
    std::vector<std::pair<UserObject*, unsigned>> references;
    for (const auto& retained : retained_) references.emplace_back(retained.first, 1);
    return std::make_shared<GraphExecutable>(std::move(nodes), std::move(references));
}

GraphExecutable::GraphExecutable(std::vector<GraphNode> nodes,
                                 std::vector<std::pair<UserObject*, unsigned>> references)
    : nodes_(std::move(nodes)), references_(std::move(references)) {}

GraphExecutable::~GraphExecutable() {
    for (const auto& [object, count] : references_) object->release(count);
}

int GraphExecutable::foreignNode(int device) const {
    for (size_t i = 0; i < nodes_.size(); ++i) {
        if (nodes_[i].device >= 0 && nodes_[i].device != device) return static_cast<int>(i);
    }
    return -1;
}

bool GraphExecutable::running() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lastLaunch_ != nullptr && !lastLaunch_->done();
}

void GraphExecutable::launch(const std::shared_ptr<GraphExecutable>& self, Stream& stream) {
    std::lock_guard<std::mutex> lock(self->mutex_);
    if (self->lastLaunch_) stream.waitFor(self->lastLaunch_);
    for (const GraphNode& node : self->nodes_) node.work(stream);
    self->lastLaunch_ = stream.mark();
    // Dropped when the stream reaches it, not when the queue lets go of the work.
    stream.submit([launched = self]() mutable { launched.reset(); });
}

}  // namespace polyhal::doubles
