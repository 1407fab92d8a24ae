// Level Zero events handed out one "slot" per signal, so that an event can be recorded again
// while waits on its previous record are still pending.
//
// A Level Zero event is a flag that must be reset before it can be signalled again, and a wait
// enqueued on it stalls until it is set. Resetting an event that some stream has not yet waited
// on would make that wait see a later record (or hang). So every record, marker and host-function
// step takes a fresh slot, and a slot is reset and reused only when
//   - nobody holds a reference to it any more (the SlotRef's deleter hands it back),
//   - it has signalled, and
//   - every wait enqueued on it has executed: each such wait is a barrier that signals an
//     acknowledgement slot of its own, kept in `waitAcknowledgements`.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_EVENT_POOL_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_EVENT_POOL_HPP_

#include <level_zero/ze_api.h>
#include <polyhal/hal.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace polyhal::level_zero {

struct EventSlot;
using SlotRef = std::shared_ptr<EventSlot>;

struct EventSlot {
    ze_event_handle_t event = nullptr;
    // Host memory the device writes its global timestamp to when the slot records a timing
    // event (zeCommandListAppendWriteGlobalTimestamp).
    uint64_t* timestamp = nullptr;
    // Set once a signal of the slot is on its way: a command that signals it was appended, or a
    // host function that signals it from the host (zeEventHostSignal) was queued. A slot never
    // submitted can be reused at once; a submitted one only once it has signalled, and then
    // after zeEventHostReset, so that no one is ever handed a signalled slot. Written only by
    // the holder that submits, before it shares the slot.
    bool submitted = false;
    // Set while the command that signals the slot is in a stream's work held on the host (a
    // regular list not yet submitted, stream.hpp): a wait for it must not be placed in a ring,
    // where it would hold every list of the engine until the host releases that work.
    std::atomic<bool> heldBack{false};

    // Records that a barrier signalling `acknowledgement` waits on this slot.
    void addWaitAcknowledgement(SlotRef acknowledgement);

    std::mutex acknowledgementsMutex;
    std::vector<SlotRef> waitAcknowledgements;
    // Link of the pool's queue of released slots (intrusive, so releasing never allocates).
    EventSlot* nextReleased = nullptr;
};

// The slots of one Level Zero context: host-visible events usable by all its devices.
// Thread-safe.
class EventSlotPool {
  public:
    explicit EventSlotPool(ze_context_handle_t context) : context_(context) {}
    // Destroys every event and event pool. No slot may be in use by a device any more.
    ~EventSlotPool();
    EventSlotPool(const EventSlotPool&) = delete;
    EventSlotPool& operator=(const EventSlotPool&) = delete;

    // A reset slot, recycled when one is free, otherwise created.
    halError acquire(SlotRef* slot);

  private:
    // One Level Zero event pool and the slots over its events.
    struct Block {
        ze_event_pool_handle_t pool = nullptr;
        uint64_t* timestamps = nullptr;  // host memory, one per event
        std::unique_ptr<EventSlot[]> slots;
        uint32_t used = 0;  // slots whose event exists
    };

    // Returns a released slot that is safe to reset, or null. Called with mutex_ held; the
    // acknowledgements of the recycled slot move to `finished`, to be dropped after unlocking
    // (dropping them hands them back to this pool).
    EventSlot* takeReusableLocked(std::vector<SlotRef>* finished, halError* error);
    halError createSlotLocked(EventSlot** slot);
    halError addBlockLocked();
    // The SlotRef deleter: queues the slot for reuse. Never throws.
    void release(EventSlot* slot);
    void pushReleasedLocked(EventSlot* slot);
    EventSlot* popReleasedLocked();

    ze_context_handle_t context_;
    std::mutex mutex_;
    std::vector<Block> blocks_;
    // Released slots, oldest first.
    EventSlot* releasedHead_ = nullptr;
    EventSlot* releasedTail_ = nullptr;
    size_t releasedCount_ = 0;
};

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_EVENT_POOL_HPP_
