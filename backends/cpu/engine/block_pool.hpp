// The process's kernel block executors: helper threads, sized to the hardware, that run blocks
// of whichever launch is most urgent, so a launch's blocks run in parallel and a higher-priority
// stream's launch gets the helpers first.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_BLOCK_POOL_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_BLOCK_POOL_HPP_

#include <atomic>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/block_job.hpp"
#include "engine/launch_queue.hpp"
#include "engine/notifier.hpp"
#include "engine/scratch_buffer.hpp"

namespace polyhal::cpu {

class BlockPool {
  public:
    // One helper per hardware thread but one: the launching worker works too.
    static unsigned defaultHelperCount();

    // Starts `helperCount` helpers (0: every launch runs on its stream's worker alone). Throws
    // std::system_error when a thread cannot be started.
    explicit BlockPool(unsigned helperCount);
    ~BlockPool();
    BlockPool(const BlockPool&) = delete;
    BlockPool& operator=(const BlockPool&) = delete;

    // Runs every block of `job` on the calling thread, helped by the helpers that are idle or
    // busy with a less urgent launch; returns when all blocks have run, or after a failure once
    // the blocks already started have finished. `scratch` is the caller's shared memory.
    void run(BlockJob& job, ScratchBuffer& scratch);

  private:
    void helperMain();
    void stopHelpers();
    // Takes the most urgent job that still has blocks, registered as a helper inside it;
    // nullptr when none is left.
    BlockJob* enterMostUrgent();
    void publishQueueState();  // with mutex_ held

    std::mutex mutex_;
    LaunchQueue queue_;
    // Mirrors of queue_ readable without the lock.
    std::atomic<size_t> queued_{0};
    std::atomic<int> frontPriority_{0};
    std::atomic<bool> stopping_{false};
    Notifier work_;      // helpers sleep here while the queue is empty
    Notifier finished_;  // launching threads wait here for helpers to leave their job
    std::vector<std::thread> helpers_;
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_BLOCK_POOL_HPP_
