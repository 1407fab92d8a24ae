// Events: here your runtime's event (CUevent, cl_event, ze_event_handle_t) would live. The
// template's event is the point of its last record, shared with the waits enqueued on it.
#ifndef POLYHAL_TEMPLATE_EVENT_HPP_
#define POLYHAL_TEMPLATE_EVENT_HPP_

#include <polyhal/plugin.h>

#include <memory>
#include <mutex>

#include "stream.hpp"

namespace polyhal_template {

class Event {
  public:
    using Handle = halPluginEvent;

    // The point captured by the last record; null when never recorded.
    std::shared_ptr<Marker> lastRecord() {
        std::lock_guard<std::mutex> lock(mutex_);
        return last_;
    }
    // Recording again moves the event; waits already enqueued keep the marker they copied.
    void record(std::shared_ptr<Marker> marker) {
        std::lock_guard<std::mutex> lock(mutex_);
        last_ = std::move(marker);
    }

  private:
    std::mutex mutex_;
    std::shared_ptr<Marker> last_;
};

}  // namespace polyhal_template

#endif  // POLYHAL_TEMPLATE_EVENT_HPP_
