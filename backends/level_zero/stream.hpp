// Streams: one asynchronous immediate command list each, kept in order by barriers.
//
// Level Zero 1.4 (the API of Debian's loader) does not promise that the commands of a list run
// in order: only a barrier does. So a command is appended after a barrier unless the last thing
// appended already was one (`ordered_`). Event records and stream markers are themselves
// barriers that signal a slot; stream waits are barriers on the waited slot, which block every
// later command until it has signalled.
//
// Copies go to a second list on one of the device's copy engines, when it has one. That list
// is kept in step with the first: a copy waits for a marker of the work appended before it, and
// the next work of the first list waits for the copies before it (joinCopiesLocked). Markers,
// records, waits and host functions all live on the first list, which thus stays the stream's
// one timeline.
//
// Work after a host function is held on the host, never by a wait in the ring: Intel's driver
// gives every immediate list of one engine the same submission ring (compute-runtime
// level_zero/core/source/device/device.cpp:1936), where a wait for an event the host signals
// would stall every stream of the engine until then. While a host function is pending, the
// stream appends to a regular command list instead, which the host-function thread submits to
// the immediate list (zeCommandListImmediateAppendCommandListsExp) once the function has run;
// a later host function starts the next such list. A wait for a record held back in another
// stream's list likewise waits on the stream's host-function thread. Copies made while held go
// to the held list, on the compute engine. Where the driver cannot submit regular lists, later
// work waits on the device for the function's end, as before.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_STREAM_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_STREAM_HPP_

#include <level_zero/ze_api.h>
#include <polyhal/plugin.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "engine/copy.hpp"
#include "engine/event_pool.hpp"
#include "engine/host_func.hpp"
#include "error.hpp"

namespace polyhal::level_zero {

class Device;

class Stream {
  public:
    using Handle = halPluginStream;

    Stream(Device* device, ze_command_list_handle_t list, ze_command_queue_priority_t priority);
    // Destroys the command list; its work must have finished.
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    Device& device() const { return *device_; }
    ze_command_list_handle_t list() const { return list_; }

    // Appends one command, in order after everything appended before. `append` receives the
    // command list and returns the ze_result_t of the zeCommandListAppend* call named `call`.
    template <typename Append>
    halError appendCommand(const char* call, Append&& append) {
        std::lock_guard<std::mutex> lock(mutex_);
        return appendCommandLocked(call, append);
    }

    // Submits the closed regular list `list` in stream order, `signal` signalling once it has
    // run: at once, or with the work held on the host (after the held list it follows, and
    // before a new one that begins with the signal).
    halError submitRegularList(ze_command_list_handle_t list, const SlotRef& signal);

    // Appends a copy, in order after everything appended before: on a copy engine when the
    // device has one.
    halError appendCopy(const Copy& copy);
    // As appendCopy of `count` bytes from pageable host memory `src`, copied first to memory of
    // the driver, so that the caller may reuse `src` at once (as hal.h promises): the device
    // reads pageable memory only when the copy runs. The staging memory is freed once the copy
    // has run.
    halError appendStagedCopy(void* dst, const void* src, size_t count);

    // `slot` signals once everything appended so far has finished.
    halError signalAfterPriorWork(const SlotRef& slot);
    // As signalAfterPriorWork, and the device's global timestamp is written to slot->timestamp.
    halError signalWithTimestamp(const SlotRef& slot);
    // Later commands start only after `slot` has signalled. Does not block the host.
    halError waitFor(const SlotRef& slot);
    // Runs `call` on this stream's host-function thread in stream order.
    halError launchHostFunc(HostFuncCall call);
    // Submits the oldest held list once the host function before it has run (host-function
    // thread); failures are reported as asynchronous failures of the stream.
    void releaseHeld() noexcept;

    // HAL_SUCCESS when everything appended has finished, HAL_ERROR_NOT_READY otherwise, or an
    // asynchronous failure (reported once).
    halError query();
    // Blocks until everything appended has finished; returns an asynchronous failure once.
    halError synchronize();
    // Blocks until everything appended has finished, leaving failures to be reported later.
    void waitIdle();
    // Appends a final marker (at destruction): isFinished() then tells when the list is idle.
    halError markEnd();
    // Whether the work up to the last marker has finished (or failed); never blocks.
    bool isFinished();

    // Remembers a failure of work that ran after its call returned (the first one wins).
    void setAsyncError(halError code, const char* message) noexcept;

  private:
    // Work held on the host after a host function: regular lists collecting it (a graph
    // launched meanwhile ends one and its recording is submitted between it and the next), in
    // the order the release submits them, and the slots their commands signal.
    struct HeldList {
        std::vector<ze_command_list_handle_t> owned;     // the stream's, the last one open
        std::vector<ze_command_list_handle_t> sequence;  // owned lists and graph recordings
        std::vector<SlotRef> signals;
    };
    // The lists of a submitted held list and the slot its run signals; destroyed once that has
    // signalled.
    struct SubmittedList {
        std::vector<ze_command_list_handle_t> owned;
        SlotRef ran;
    };

    template <typename Append>
    halError appendCommandLocked(const char* call, Append& append) {
        if (halError error = joinCopiesLocked(); error != HAL_SUCCESS) return error;
        if (halError error = orderAfterPriorCommandsLocked(); error != HAL_SUCCESS) return error;
        if (halError error = check(append(targetLocked()), call); error != HAL_SUCCESS) {
            return error;
        }
        ordered_ = false;
        ++appended_;
        return HAL_SUCCESS;
    }
    // Where work goes now: the held list while a host function is pending, list_ otherwise.
    ze_command_list_handle_t targetLocked() const {
        return held_.empty() ? list_ : held_.back().owned.back();
    }
    bool holdingLocked() const { return !held_.empty(); }
    halError signalAfterPriorWorkLocked(const SlotRef& slot);
    // Notes that a command of the current target signals `slot`.
    void signalledLocked(const SlotRef& slot);
    // Starts holding later work in a new regular list.
    halError holdLocked();
    // Starts another regular list for the held work `held`.
    halError newHeldListLocked(HeldList* held);
    // Destroys the submitted held lists whose runs have finished (all with `all`).
    void destroyRanListsLocked(bool all);
    // Frees the staging memory of copies that have run (all with `all`).
    void freeStagedLocked(bool all);
    // Holds this stream's later work until `slot` has signalled, on the host-function thread.
    halError waitOnHost(const SlotRef& slot);
    halError orderAfterPriorCommandsLocked();
    // Makes later work of list_ wait for the copies appended so far.
    halError joinCopiesLocked();
    halError copyListLocked(ze_command_list_handle_t* list);
    // A slot that signals when everything appended so far has finished; null if nothing was
    // ever appended. Reuses the last marker when nothing was appended since.
    halError markerLocked(SlotRef* marker);
    halError appendMarker(SlotRef* marker);
    halError takeAsyncError();

    Device* const device_;
    const ze_command_list_handle_t list_;
    const ze_command_queue_priority_t priority_;

    // Level Zero forbids appending to one command list from two threads at once, and a host
    // function's signal, wait and hand-over to its thread must not interleave with other work.
    std::mutex mutex_;
    bool ordered_ = true;    // no command appended since the last full barrier
    uint64_t appended_ = 0;  // commands and waits appended so far
    SlotRef marker_;
    uint64_t markerAppended_ = 0;                // appended_ when marker_ was appended
    std::unique_ptr<HostFuncThread> hostFuncs_;  // started on first use
    std::deque<HeldList> held_;                  // oldest first; not yet submitted
    std::vector<SubmittedList> submitted_;       // held lists submitted, not yet destroyed
    // Staging memory of copies from pageable memory, and the slot of each copy's end (null
    // where none could be had: freed with the stream).
    std::vector<std::pair<void*, SlotRef>> staged_;
    ze_command_list_handle_t copyList_ = nullptr;  // on a copy engine; created on first copy
    bool copyOrdered_ = true;                      // ordered_, for copyList_
    uint64_t copyForkedAt_ = 0;  // appended_ when a copy last waited for list_'s work
    SlotRef copyTail_;           // the last copy's, until list_ waits for it

    std::mutex asyncErrorMutex_;
    halError asyncError_ = HAL_SUCCESS;
    char asyncErrorMessage_[256] = {};
};

// Destroys the device's retired streams whose work has finished; with `wait`, waits for all.
void reapRetiredStreams(Device& device, bool wait);

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_STREAM_HPP_
