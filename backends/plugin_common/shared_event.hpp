// The state of a HAL_EVENT_INTERPROCESS event that a plugin keeps itself (cpu, level_zero), in a
// page of shared memory that every process holding the event maps (shared_generations.hpp). A
// record takes the next generation and enqueues work that publishes it when the stream reaches
// it; a wait enqueues work that holds the stream until the generation it saw is published.
#ifndef POLYHAL_BACKENDS_PLUGIN_COMMON_SHARED_EVENT_HPP_
#define POLYHAL_BACKENDS_PLUGIN_COMMON_SHARED_EVENT_HPP_

#include <polyhal/plugin.h>

#include <cstdint>
#include <memory>

#include "plugin_common/shared_generations.hpp"
#include "plugin_common/shared_memory.hpp"

namespace polyhal {

class SharedEventState {
  public:
    // Errors: as SharedMemory::create.
    static halError create(std::shared_ptr<SharedEventState>* created);
    // Errors: as SharedMemory::open.
    static halError open(const halPluginIpcHandle& handle,
                         std::shared_ptr<SharedEventState>* opened);

    void exportTo(halPluginIpcHandle* handle) const { memory_->exportTo(handle); }

    // As SharedGenerations.
    uint32_t beginRecord() { return generations().beginRecord(); }
    void publish(uint32_t generation) { generations().publish(generation); }
    uint32_t latest() const { return generations().latest(); }
    bool reached(uint32_t generation) const { return generations().reached(generation); }
    void wait(uint32_t generation) const { generations().wait(generation); }

  private:
    explicit SharedEventState(std::unique_ptr<SharedMemory> memory) : memory_(std::move(memory)) {}
    SharedGenerations& generations() const { return SharedGenerations::at(memory_->data()); }

    std::unique_ptr<SharedMemory> memory_;
};

}  // namespace polyhal

#endif  // POLYHAL_BACKENDS_PLUGIN_COMMON_SHARED_EVENT_HPP_
