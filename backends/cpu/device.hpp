// Devices: a memory capacity and the streams created on it. Every device shares the process's
// block pool.
#ifndef POLYHAL_BACKENDS_CPU_DEVICE_HPP_
#define POLYHAL_BACKENDS_CPU_DEVICE_HPP_

#include <polyhal/plugin.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/block_pool.hpp"
#include "engine/device_memory.hpp"
#include "engine/timeline.hpp"
#include "stream.hpp"

namespace polyhal::cpu {

// Stream priorities as in CUDA: lower numbers are more urgent; 0 is the default.
constexpr int kLeastStreamPriority = 0;
constexpr int kGreatestStreamPriority = -2;

class Device {
  public:
    using Handle = halPluginDevice;

    Device(std::string name, uint64_t memoryCapacity, BlockPool& pool)
        : name_(std::move(name)), pool_(pool), memory_(memoryCapacity) {}
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    const std::string& name() const { return name_; }
    BlockPool& blockPool() const { return pool_; }
    DeviceMemory& memory() { return memory_; }

    // Throws std::system_error (no thread) or std::bad_alloc.
    Stream* createStream(int priority);
    // Releases the stream (its handle is gone) and keeps only its timeline and its worker
    // thread, until its work is done.
    void destroyStream(Stream& stream);
    // Waits for the work submitted so far to every stream of the device, destroyed ones
    // included, and returns one unreported failure among them. The workers of destroyed
    // streams whose work is done have ended when it returns.
    halError synchronize();
    // At process exit: lets the workers of destroyed streams that no call joined yet end on
    // their own (a thread neither joined nor detached counts as leaked).
    void detachWorkers();

  private:
    struct TrackedTimeline {
        std::shared_ptr<Timeline> timeline;
        bool destroyed;      // its stream was destroyed: no more work will come
        std::thread worker;  // a destroyed stream's worker, which ends after that work
    };
    // Drops destroyed streams whose work is done, keeping an unreported failure, and joins
    // their workers, which are ending (they need none of the device's locks for that). With
    // mutex_.
    void pruneFinished();

    const std::string name_;
    BlockPool& pool_;
    DeviceMemory memory_;

    std::mutex mutex_;
    std::vector<TrackedTimeline> timelines_;  // of live streams and of destroyed, busy ones
    // A failure of a destroyed stream that was pruned before anything reported it.
    std::optional<Failure> orphanedFailure_;
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_DEVICE_HPP_
