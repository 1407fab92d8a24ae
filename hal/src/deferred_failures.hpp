// Asynchronous failures that the core's own waits took from a plugin, kept for the calls that
// report them.
//
// A plugin hands out each asynchronous failure once, to whichever streamSynchronize,
// streamQuery or deviceSynchronize comes first. The core also calls those to wait for work of
// its own (halMalloc, halMemcpy, halModuleUnload, ...), and those calls must neither report the
// failure nor lose it (hal.h, "Asynchronous failures"). So a wait of the core defers what it
// receives here, under the stream it waited for (or under no stream, for a device-wide wait),
// and the reporting calls take it back out, oldest first.
#ifndef POLYHAL_HAL_SRC_DEFERRED_FAILURES_HPP_
#define POLYHAL_HAL_SRC_DEFERRED_FAILURES_HPP_

#include <polyhal/hal.h>

#include <atomic>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

struct halStream_t;

namespace polyhal {

struct DeferredFailure {
    halError code;
    std::string message;  // the message of the failing operation, backend name first
};

class DeferredFailures {
  public:
    // Keeps a failure of work of `stream` (nullptr: of the device, stream unknown).
    void defer(const halStream_t* stream, halError code, std::string message);

    // Is no failure kept at all? The common case, answered without the lock.
    bool empty() const { return count_.load(std::memory_order_acquire) == 0; }

    // The oldest failure kept for `stream`, removed.
    std::optional<DeferredFailure> take(const halStream_t* stream);

    // The oldest failure kept for any stream of the device, removed.
    std::optional<DeferredFailure> takeOldest();

    // `stream` is being destroyed: its failures stay, for the device's reporting calls.
    void orphan(const halStream_t* stream);

    // Drops every failure kept (halResetDevice); returns how many there were.
    size_t clear();

  private:
    struct Entry {
        const halStream_t* stream;
        DeferredFailure failure;
    };

    std::atomic<size_t> count_{0};  // lets the common no-failure path skip the lock
    std::mutex mutex_;
    std::deque<Entry> entries_;
};

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_DEFERRED_FAILURES_HPP_
