// The loop a stream's worker thread runs: commands in order, each completion published on the
// stream's timeline.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_WORKER_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_WORKER_HPP_

#include "engine/block_pool.hpp"
#include "engine/command_queue.hpp"
#include "engine/timeline.hpp"

namespace polyhal::cpu {

class Worker {
  public:
    // `priority` orders the stream's kernel blocks in the block pool.
    Worker(CommandQueue& queue, Timeline& timeline, BlockPool& pool, int priority)
        : queue_(queue), timeline_(timeline), pool_(pool), priority_(priority) {}

    // Runs on the stream's thread until the queue is closed and drained. `niceIncrement`
    // (>= 0) lowers the thread's OS scheduling priority first, where that is permitted.
    void run(int niceIncrement);

  private:
    CommandQueue& queue_;
    Timeline& timeline_;
    BlockPool& pool_;
    const int priority_;
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_WORKER_HPP_
