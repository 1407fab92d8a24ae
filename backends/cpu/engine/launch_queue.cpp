// Implements launch_queue.hpp.
#include "engine/launch_queue.hpp"

#include <algorithm>

namespace polyhal::cpu {

void LaunchQueue::push(BlockJob* job, int priority) {
    entries_.push_back(Entry{priority, nextSequence_++, job});
}

void LaunchQueue::remove(const BlockJob* job) {
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [job](const Entry& entry) { return entry.job == job; }),
                   entries_.end());
}

const LaunchQueue::Entry* LaunchQueue::mostUrgent() const {
    const Entry* best = nullptr;
    for (const Entry& entry : entries_) {
        if (best == nullptr || entry.priority < best->priority ||
            (entry.priority == best->priority && entry.sequence < best->sequence)) {
            best = &entry;
        }
    }
    return best;
}

BlockJob* LaunchQueue::front() const {
    const Entry* entry = mostUrgent();
    return entry != nullptr ? entry->job : nullptr;
}

int LaunchQueue::frontPriority() const {
    const Entry* entry = mostUrgent();
    return entry != nullptr ? entry->priority : INT_MAX;
}

}  // namespace polyhal::cpu
