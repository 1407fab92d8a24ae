// The kernel launches that block pool helpers may work on, most urgent first: the lowest
// priority number, then the oldest. Not thread-safe: BlockPool locks around it.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_LAUNCH_QUEUE_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_LAUNCH_QUEUE_HPP_

#include <climits>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace polyhal::cpu {

struct BlockJob;

class LaunchQueue {
  public:
    void push(BlockJob* job, int priority);
    // Removes `job` if present.
    void remove(const BlockJob* job);
    // The most urgent job, or nullptr when empty.
    BlockJob* front() const;
    // The priority of front(), or INT_MAX when empty.
    int frontPriority() const;
    size_t size() const { return entries_.size(); }

  private:
    struct Entry {
        int priority;
        uint64_t sequence;
        BlockJob* job;
    };
    const Entry* mostUrgent() const;

    // A handful of entries (one per stream launching right now): a linear scan beats a heap.
    std::vector<Entry> entries_;
    uint64_t nextSequence_ = 0;
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_LAUNCH_QUEUE_HPP_
