// The pool of recyclable event slots of one Level Zero context.
#include "engine/event_pool.hpp"

#include <algorithm>

#include <polyhal/plugin_support.hpp>

#include "error.hpp"
#include "symbols.hpp"

namespace polyhal::level_zero {
namespace {

constexpr uint32_t kSlotsPerBlock = 128;
// Released slots examined per acquire before a new one is created. Slots that are not ready
// move to the back of the queue, so one long-pending slot cannot hide the ready ones behind it.
constexpr size_t kScanLimit = 8;

bool hasSignalled(const EventSlot& slot) {
    return !slot.submitted || ze.zeEventQueryStatus.address(slot.event) == ZE_RESULT_SUCCESS;
}

bool isReusable(const EventSlot& slot) {
    if (!hasSignalled(slot)) return false;
    return std::all_of(
        slot.waitAcknowledgements.begin(), slot.waitAcknowledgements.end(),
        [](const SlotRef& acknowledgement) { return hasSignalled(*acknowledgement); });
}

}  // namespace

void EventSlot::addWaitAcknowledgement(SlotRef acknowledgement) {
    std::lock_guard<std::mutex> lock(acknowledgementsMutex);
    waitAcknowledgements.push_back(std::move(acknowledgement));
}

EventSlotPool::~EventSlotPool() {
    // Dropping the acknowledgements hands them back to this pool; do it before the teardown.
    for (const Block& block : blocks_) {
        for (uint32_t i = 0; i < block.used; ++i) block.slots[i].waitAcknowledgements.clear();
    }
    for (const Block& block : blocks_) {
        for (uint32_t i = 0; i < block.used; ++i) {
            const ze_result_t result = ze.zeEventDestroy.address(block.slots[i].event);
            if (result != ZE_RESULT_SUCCESS) {
                plugin::log(HAL_LOG_WARN, "zeEventDestroy: %s", resultName(result));
            }
        }
        const ze_result_t destroyed = ze.zeEventPoolDestroy.address(block.pool);
        const ze_result_t freed = ze.zeMemFree.address(context_, block.timestamps);
        if (destroyed != ZE_RESULT_SUCCESS || freed != ZE_RESULT_SUCCESS) {
            plugin::log(HAL_LOG_WARN, "zeEventPoolDestroy: %s, zeMemFree: %s",
                        resultName(destroyed), resultName(freed));
        }
    }
}

halError EventSlotPool::acquire(SlotRef* slot) {
    std::vector<SlotRef> finished;  // declared before the lock: dropped after unlocking
    EventSlot* taken = nullptr;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        halError error = HAL_SUCCESS;
        taken = takeReusableLocked(&finished, &error);
        if (error != HAL_SUCCESS) return error;
        if (taken == nullptr) {
            error = createSlotLocked(&taken);
            if (error != HAL_SUCCESS) return error;
        }
    }
    // Should the control block fail to allocate, shared_ptr calls the deleter: no slot leaks.
    *slot = SlotRef(taken, [this](EventSlot* released) { release(released); });
    return HAL_SUCCESS;
}

EventSlot* EventSlotPool::takeReusableLocked(std::vector<SlotRef>* finished, halError* error) {
    const size_t scans = std::min(releasedCount_, kScanLimit);
    for (size_t i = 0; i < scans; ++i) {
        EventSlot* slot = popReleasedLocked();
        if (!isReusable(*slot)) {
            pushReleasedLocked(slot);
            continue;
        }
        if (slot->submitted) {
            const ze_result_t result = ze.zeEventHostReset.address(slot->event);
            if (result != ZE_RESULT_SUCCESS) {
                pushReleasedLocked(slot);
                *error = check(result, "zeEventHostReset");
                return nullptr;
            }
        }
        slot->submitted = false;
        finished->swap(slot->waitAcknowledgements);
        return slot;
    }
    return nullptr;
}

halError EventSlotPool::createSlotLocked(EventSlot** slot) {
    if (blocks_.empty() || blocks_.back().used == kSlotsPerBlock) {
        if (halError error = addBlockLocked(); error != HAL_SUCCESS) return error;
    }
    Block& block = blocks_.back();
    EventSlot& created = block.slots[block.used];
    const ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, block.used,
                               ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
    POLYHAL_ZE_RETURN_IF_ERROR(zeEventCreate, block.pool, &desc, &created.event);
    created.timestamp = block.timestamps + block.used;
    ++block.used;
    *slot = &created;
    return HAL_SUCCESS;
}

halError EventSlotPool::addBlockLocked() {
    // Allocated before any Level Zero object, so that no allocation can fail once they exist.
    Block block;
    block.slots = std::make_unique<EventSlot[]>(kSlotsPerBlock);
    blocks_.reserve(blocks_.size() + 1);

    const ze_host_mem_alloc_desc_t hostDesc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    void* timestamps = nullptr;
    POLYHAL_ZE_RETURN_IF_ERROR(zeMemAllocHost, context_, &hostDesc,
                               kSlotsPerBlock * sizeof(uint64_t), sizeof(uint64_t), &timestamps);
    block.timestamps = static_cast<uint64_t*>(timestamps);
    // Host-visible, and with no device list: usable by every device of the context.
    const ze_event_pool_desc_t poolDesc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                                        ZE_EVENT_POOL_FLAG_HOST_VISIBLE, kSlotsPerBlock};
    const ze_result_t result =
        ze.zeEventPoolCreate.address(context_, &poolDesc, 0, nullptr, &block.pool);
    if (result != ZE_RESULT_SUCCESS) {
        ze.zeMemFree.address(context_, timestamps);
        return check(result, "zeEventPoolCreate");
    }
    blocks_.push_back(std::move(block));
    return HAL_SUCCESS;
}

void EventSlotPool::release(EventSlot* slot) {
    std::lock_guard<std::mutex> lock(mutex_);
    pushReleasedLocked(slot);
}

void EventSlotPool::pushReleasedLocked(EventSlot* slot) {
    slot->nextReleased = nullptr;
    if (releasedTail_ == nullptr) {
        releasedHead_ = slot;
    } else {
        releasedTail_->nextReleased = slot;
    }
    releasedTail_ = slot;
    ++releasedCount_;
}

EventSlot* EventSlotPool::popReleasedLocked() {
    EventSlot* slot = releasedHead_;
    releasedHead_ = slot->nextReleased;
    if (releasedHead_ == nullptr) releasedTail_ = nullptr;
    --releasedCount_;
    return slot;
}

}  // namespace polyhal::level_zero
