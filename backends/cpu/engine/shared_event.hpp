// The state of a HAL_EVENT_INTERPROCESS event, kept in a page of shared memory that every
// process holding the event maps: how many records were made (in any process) and which of them
// has completed. A record takes the next generation and enqueues a command that publishes it
// when the stream reaches it; waiters compare generations and sleep on a futex that is not
// private to the process, so a publication in one process wakes waiters in the others.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_SHARED_EVENT_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_SHARED_EVENT_HPP_

#include <polyhal/plugin.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "engine/shared_memory.hpp"

namespace polyhal::cpu {

class SharedEventState {
  public:
    // Errors: as SharedMemory::create.
    static halError create(std::shared_ptr<SharedEventState>* created);
    // Errors: as SharedMemory::open.
    static halError open(const halPluginIpcHandle& handle,
                         std::shared_ptr<SharedEventState>* opened);

    void exportTo(halPluginIpcHandle* handle) const { memory_->exportTo(handle); }

    // A new record: its generation, to be published once the stream reaches it.
    uint32_t beginRecord();
    // The record `generation` has completed (generations may complete out of order across
    // streams; the newest one published wins).
    void publish(uint32_t generation);
    // The generation of the latest record, 0 if none.
    uint32_t latest() const;
    // Has the record `generation` (or a later one) completed?
    bool reached(uint32_t generation) const;
    // Blocks until reached(generation).
    void wait(uint32_t generation) const;

  private:
    struct Page {
        std::atomic<uint32_t> recorded;
        std::atomic<uint32_t> completed;
    };
    static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared atomics must be lock-free");

    explicit SharedEventState(std::unique_ptr<SharedMemory> memory) : memory_(std::move(memory)) {}
    Page& page() const { return *static_cast<Page*>(memory_->data()); }

    std::unique_ptr<SharedMemory> memory_;
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_SHARED_EVENT_HPP_
