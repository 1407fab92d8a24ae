// Implements shared_event_steps.hpp.
#include "engine/shared_event_steps.hpp"

#include <polyhal/plugin_support.hpp>

#include <new>

#include "entries.hpp"

namespace polyhal::level_zero {
namespace {

struct Step {
    std::shared_ptr<SharedEventState> event;
    uint32_t generation;
};

// Runs `run(step)` on `stream`'s host-function thread, in stream order.
template <void (*run)(const Step&)>
halError enqueue(halPluginStream stream, Step step) {
    auto* pending = new (std::nothrow) Step(std::move(step));
    if (pending == nullptr) {
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "no host memory for an interprocess event");
    }
    const halError error = launchHostFunc(
        stream,
        [](void* userData) {
            const std::unique_ptr<Step> owned(static_cast<Step*>(userData));
            run(*owned);
        },
        pending);
    if (error != HAL_SUCCESS) delete pending;  // never queued
    return error;
}

void publish(const Step& step) {
    step.event->publish(step.generation);
}

void wait(const Step& step) {
    step.event->wait(step.generation);
}

}  // namespace

halError recordShared(halPluginStream stream, const std::shared_ptr<SharedEventState>& event) {
    const uint32_t generation = event->beginRecord();
    const halError error = enqueue<publish>(stream, Step{event, generation});
    // Nothing was captured: let no waiter, in any process, hang on the record.
    if (error != HAL_SUCCESS) event->publish(generation);
    return error;
}

halError waitShared(halPluginStream stream, const std::shared_ptr<SharedEventState>& event) {
    const uint32_t generation = event->latest();
    if (event->reached(generation)) return HAL_SUCCESS;
    return enqueue<wait>(stream, Step{event, generation});
}

}  // namespace polyhal::level_zero
