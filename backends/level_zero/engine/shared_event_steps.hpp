// Records of and waits for HAL_EVENT_INTERPROCESS events, in stream order. Level Zero events are
// flags set once and reset before they are set again, which another process cannot follow, so an
// interprocess event keeps its records in shared memory (plugin_common/shared_event.hpp) and a stream
// reaches it through its host-function thread: a record publishes the event's next generation
// once the stream's earlier work has finished; a wait holds the stream's later work until the
// generation it saw has been published, by whichever process recorded it.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_SHARED_EVENT_STEPS_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_SHARED_EVENT_STEPS_HPP_

#include <polyhal/plugin.h>

#include <memory>

#include "plugin_common/shared_event.hpp"

namespace polyhal::level_zero {

halError recordShared(halPluginStream stream, const std::shared_ptr<SharedEventState>& event);
halError waitShared(halPluginStream stream, const std::shared_ptr<SharedEventState>& event);

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_SHARED_EVENT_STEPS_HPP_
