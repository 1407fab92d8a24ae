// Streams: an in-order queue of commands with its own worker thread and completion timeline.
#ifndef POLYHAL_BACKENDS_CPU_STREAM_HPP_
#define POLYHAL_BACKENDS_CPU_STREAM_HPP_

#include <polyhal/plugin.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "engine/command.hpp"
#include "engine/command_queue.hpp"
#include "engine/timeline.hpp"
#include "engine/worker.hpp"

namespace polyhal::cpu {

class Device;

// Owned jointly by its handle and its worker thread, so that destroying the handle returns at
// once: the worker finishes the queued work, and whichever of the two lets go last frees it.
class Stream {
  public:
    using Handle = halPluginStream;

    // Starts the worker thread. Throws std::system_error (no thread) or std::bad_alloc.
    Stream(Device& device, int priority);
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    Device& device() const { return device_; }
    const std::shared_ptr<Timeline>& timeline() const { return timeline_; }

    // Enqueues `command` and returns its ticket. Throws std::bad_alloc (nothing enqueued).
    uint64_t submit(Command&& command) { return queue_.push(std::move(command)); }

    // Gives up the handle's ownership: no more work will come. The stream may be freed before
    // this returns, so the caller must not touch it afterwards. Returns the worker thread, which
    // ends once the queued work is done, for the caller to join or detach.
    std::thread release();

  private:
    ~Stream() = default;  // only through unreference()
    void unreference();

    Device& device_;
    std::shared_ptr<Timeline> timeline_;
    CommandQueue queue_;
    Worker worker_;
    std::atomic<int> owners_{2};  // the handle and the worker thread
    std::thread thread_;          // last: starts once everything above exists
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_STREAM_HPP_
