// Streams on immediate command lists, and the stream entries.
#include "stream.hpp"

#include <polyhal/plugin_support.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "device.hpp"
#include "engine/host_wait.hpp"
#include "engine/retired.hpp"
#include "engine/shared_event_steps.hpp"
#include "engine/translate.hpp"
#include "entries.hpp"
#include "event.hpp"
#include "symbols.hpp"

namespace polyhal::level_zero {

Stream::Stream(Device* device, ze_command_list_handle_t list, ze_command_queue_priority_t priority)
    : device_(device), list_(list), priority_(priority) {}

Stream::~Stream() {
    hostFuncs_.reset();
    destroyRanListsLocked(true);
    freeStagedLocked(true);
    for (ze_command_list_handle_t list : {list_, copyList_}) {
        if (list == nullptr) continue;
        const ze_result_t result = device_->driver->destroyCommandList(list);
        if (result != ZE_RESULT_SUCCESS) {
            plugin::log(HAL_LOG_WARN, "zeCommandListDestroy: %s", resultName(result));
        }
    }
}

halError Stream::joinCopiesLocked() {
    if (!copyTail_) return HAL_SUCCESS;
    SlotRef acknowledgement;
    if (halError error = device_->events().acquire(&acknowledgement); error != HAL_SUCCESS) {
        return error;
    }
    copyTail_->addWaitAcknowledgement(acknowledgement);
    POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendBarrier, targetLocked(), acknowledgement->event,
                               1, &copyTail_->event);
    acknowledgement->submitted = true;
    signalledLocked(acknowledgement);
    ordered_ = true;
    ++appended_;
    copyTail_.reset();
    return HAL_SUCCESS;
}

halError Stream::copyListLocked(ze_command_list_handle_t* list) {
    if (copyList_ == nullptr) {
        // Copy engines taken in turn, as the compute engines are.
        const uint32_t engine = device_->copyListsCreated++ % device_->copyQueueCount;
        const ze_command_queue_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                           nullptr,
                                           static_cast<uint32_t>(device_->copyQueueOrdinal),
                                           engine,
                                           0,
                                           ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                           priority_};
        const ze_result_t created =
            device_->driver->createImmediateCommandList(device_->device, desc, &copyList_);
        if (halError error = check(created, "zeCommandListCreateImmediate"); error != HAL_SUCCESS) {
            return error;
        }
    }
    *list = copyList_;
    return HAL_SUCCESS;
}

halError Stream::appendCopy(const Copy& copy) {
    const auto onComputeList = [&](ze_command_list_handle_t list) {
        return copy.append(list, nullptr, 0, nullptr);
    };
    if (device_->copyQueueOrdinal < 0) return appendCommand(copy.call(), onComputeList);
    SlotRef done;
    if (halError error = device_->events().acquire(&done); error != HAL_SUCCESS) return error;
    std::lock_guard<std::mutex> lock(mutex_);
    // Held work is one list, on the compute engine: a copy engine's ring must not wait for it.
    if (holdingLocked()) return appendCommandLocked(copy.call(), onComputeList);
    ze_command_list_handle_t copies = nullptr;
    if (halError error = copyListLocked(&copies); error != HAL_SUCCESS) return error;
    // After the work of list_ appended since the last copy waited for it...
    SlotRef after;
    if (copyForkedAt_ != appended_) {
        if (halError error = markerLocked(&after); error != HAL_SUCCESS) return error;
    }
    // ...and after the copies before it.
    if (!copyOrdered_) {
        POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendBarrier, copies, nullptr, 0, nullptr);
        copyOrdered_ = true;
    }
    // The copy's own signal tells that its wait on `after` has run.
    ze_event_handle_t wait = nullptr;
    if (after) {
        after->addWaitAcknowledgement(done);
        wait = after->event;
    }
    if (halError error =
            check(copy.append(copies, done->event, after ? 1u : 0u, after ? &wait : nullptr),
                  copy.call());
        error != HAL_SUCCESS) {
        return error;
    }
    done->submitted = true;
    copyOrdered_ = false;
    if (after) copyForkedAt_ = appended_;
    copyTail_ = std::move(done);
    return HAL_SUCCESS;
}

halError Stream::appendStagedCopy(void* dst, const void* src, size_t count) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        freeStagedLocked(false);
        staged_.reserve(staged_.size() + 1);  // so that keeping the staging memory cannot fail
    }
    const ze_context_handle_t context = device_->driver->context;
    const ze_host_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    void* staging = nullptr;
    POLYHAL_ZE_RETURN_IF_ERROR(zeMemAllocHost, context, &desc, count, 64, &staging);
    std::memcpy(staging, src, count);
    if (halError error = appendCopy(Copy::linear(dst, staging, count)); error != HAL_SUCCESS) {
        ze.zeMemFree.address(context, staging);
        return error;
    }
    SlotRef copied;
    if (device_->events().acquire(&copied) == HAL_SUCCESS &&
        signalAfterPriorWork(copied) != HAL_SUCCESS) {
        copied.reset();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    staged_.emplace_back(staging, std::move(copied));
    return HAL_SUCCESS;
}

void Stream::freeStagedLocked(bool all) {
    auto ran = std::remove_if(staged_.begin(), staged_.end(), [&](const auto& staged) {
        if (!all && (!staged.second ||
                     ze.zeEventQueryStatus.address(staged.second->event) == ZE_RESULT_NOT_READY)) {
            return false;
        }
        const ze_result_t result = ze.zeMemFree.address(device_->driver->context, staged.first);
        if (result != ZE_RESULT_SUCCESS) {
            plugin::log(HAL_LOG_WARN, "freeing a copy's staging memory: zeMemFree: %s",
                        resultName(result));
        }
        return true;
    });
    staged_.erase(ran, staged_.end());
}

halError Stream::orderAfterPriorCommandsLocked() {
    if (ordered_) return HAL_SUCCESS;
    POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendBarrier, targetLocked(), nullptr, 0, nullptr);
    ordered_ = true;
    return HAL_SUCCESS;
}

halError Stream::signalAfterPriorWork(const SlotRef& slot) {
    std::lock_guard<std::mutex> lock(mutex_);
    return signalAfterPriorWorkLocked(slot);
}

halError Stream::signalAfterPriorWorkLocked(const SlotRef& slot) {
    if (halError error = joinCopiesLocked(); error != HAL_SUCCESS) return error;
    // A barrier without wait events starts once every earlier command has finished.
    POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendBarrier, targetLocked(), slot->event, 0, nullptr);
    slot->submitted = true;
    signalledLocked(slot);
    ordered_ = true;
    ++appended_;  // later markers must cover it: the list is idle only once it has run
    return HAL_SUCCESS;
}

halError Stream::signalWithTimestamp(const SlotRef& slot) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto write = [&](ze_command_list_handle_t list) {
        return ze.zeCommandListAppendWriteGlobalTimestamp.address(list, slot->timestamp,
                                                                  slot->event, 0, nullptr);
    };
    const halError error = appendCommandLocked("zeCommandListAppendWriteGlobalTimestamp", write);
    if (error == HAL_SUCCESS) {
        slot->submitted = true;
        signalledLocked(slot);
    }
    return error;
}

halError Stream::submitRegularList(ze_command_list_handle_t list, const SlotRef& signal) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (holdingLocked()) {
        // Submitted with the held work, between the list before it and a new one, which begins
        // with the signal of its end.
        HeldList& held = held_.back();
        held.sequence.reserve(held.sequence.size() + 2);
        held.sequence.push_back(list);
        if (halError error = newHeldListLocked(&held); error != HAL_SUCCESS) {
            held.sequence.pop_back();
            return error;
        }
        return signalAfterPriorWorkLocked(signal);
    }
    const Driver& driver = *device_->driver;
    auto submit = [&](ze_command_list_handle_t immediate) {
        std::vector<ze_command_list_handle_t> lists{list};
        return driver.submitCommandLists(immediate, lists, signal->event);
    };
    const halError error =
        appendCommandLocked("zeCommandListImmediateAppendCommandListsExp", submit);
    if (error == HAL_SUCCESS) signal->submitted = true;
    return error;
}

void Stream::signalledLocked(const SlotRef& slot) {
    if (!holdingLocked()) return;
    slot->heldBack = true;
    held_.back().signals.push_back(slot);
}

halError Stream::holdLocked() {
    held_.emplace_back();
    if (halError error = newHeldListLocked(&held_.back()); error != HAL_SUCCESS) {
        held_.pop_back();
        return error;
    }
    return HAL_SUCCESS;
}

halError Stream::newHeldListLocked(HeldList* held) {
    const ze_command_list_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr,
                                      device_->computeQueueOrdinal, 0};
    held->owned.reserve(held->owned.size() + 1);
    held->sequence.reserve(held->sequence.size() + 1);
    ze_command_list_handle_t list = nullptr;
    const ze_result_t created = device_->driver->createCommandList(device_->device, desc, &list);
    if (halError error = check(created, "zeCommandListCreate"); error != HAL_SUCCESS) return error;
    held->owned.push_back(list);
    held->sequence.push_back(list);
    ordered_ = true;  // runs after what is submitted before it, which ends with a barrier
    return HAL_SUCCESS;
}

void Stream::releaseHeld() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    destroyRanListsLocked(false);
    // Held lists are released in the order they were started, as their host functions run.
    HeldList held = std::move(held_.front());
    held_.pop_front();
    if (held_.empty()) ordered_ = false;  // the next command follows the held list's
    SlotRef ran;
    ze_result_t result = ZE_RESULT_SUCCESS;
    const char* call = "zeCommandListClose";
    for (ze_command_list_handle_t list : held.owned) {
        if (result == ZE_RESULT_SUCCESS) result = ze.zeCommandListClose.address(list);
    }
    if (result == ZE_RESULT_SUCCESS && device_->events().acquire(&ran) != HAL_SUCCESS) {
        result = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        call = "an event for its end";
    }
    if (result == ZE_RESULT_SUCCESS) {
        call = "zeCommandListImmediateAppendCommandListsExp";
        result = device_->driver->submitCommandLists(list_, held.sequence, ran->event);
    }
    if (result == ZE_RESULT_SUCCESS) {
        // Not counted as appended work: the held lists' own commands were, and a marker among
        // them still covers everything appended so far.
        ran->submitted = true;
        for (const SlotRef& slot : held.signals) slot->heldBack = false;
        submitted_.push_back({std::move(held.owned), std::move(ran)});
        return;
    }
    char message[256];
    std::snprintf(message, sizeof message,
                  "the work after a host function was not submitted: %s: %s (%s)", call,
                  resultName(result), resultDescription(result));
    setAsyncError(toHalError(result), message);
    // Nobody may wait for it in vain: its signals are given from the host.
    for (const SlotRef& slot : held.signals) {
        ze.zeEventHostSignal.address(slot->event);
        slot->heldBack = false;
    }
    for (ze_command_list_handle_t list : held.owned) device_->driver->destroyCommandList(list);
}

void Stream::destroyRanListsLocked(bool all) {
    auto ran = std::remove_if(submitted_.begin(), submitted_.end(), [&](const SubmittedList& run) {
        if (!all && ze.zeEventQueryStatus.address(run.ran->event) == ZE_RESULT_NOT_READY) {
            return false;
        }
        for (ze_command_list_handle_t list : run.owned) {
            const ze_result_t result = device_->driver->destroyCommandList(list);
            if (result != ZE_RESULT_SUCCESS) {
                plugin::log(HAL_LOG_WARN, "zeCommandListDestroy: %s", resultName(result));
            }
        }
        return true;
    });
    submitted_.erase(ran, submitted_.end());
}

halError Stream::waitFor(const SlotRef& slot) {
    if (slot->heldBack) return waitOnHost(slot);
    SlotRef acknowledgement;
    if (halError error = device_->events().acquire(&acknowledgement); error != HAL_SUCCESS) {
        return error;
    }
    // Registered before the append: once the barrier exists, `slot` must not be recycled
    // before the barrier has run.
    slot->addWaitAcknowledgement(acknowledgement);
    std::lock_guard<std::mutex> lock(mutex_);
    if (halError error = joinCopiesLocked(); error != HAL_SUCCESS) return error;
    // A barrier with wait events holds every later command until the events have signalled.
    POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendBarrier, targetLocked(), acknowledgement->event,
                               1, &slot->event);
    acknowledgement->submitted = true;
    signalledLocked(acknowledgement);
    ++appended_;
    return HAL_SUCCESS;
}

halError Stream::waitOnHost(const SlotRef& slot) {
    HostFuncCall call;
    call.fn = [](void* waited) { waitSleeping(static_cast<EventSlot*>(waited)->event); };
    call.userData = slot.get();
    call.kept = slot;
    EventSlotPool& events = device_->events();
    if (halError error = events.acquire(&call.started); error != HAL_SUCCESS) return error;
    if (halError error = events.acquire(&call.finished); error != HAL_SUCCESS) return error;
    return launchHostFunc(std::move(call));
}

halError Stream::launchHostFunc(HostFuncCall call) {
    const SlotRef started = call.started;
    const SlotRef finished = call.finished;
    const bool holdOnHost = device_->driver->submitsCommandLists();
    std::list<HostFuncCall> calls;
    calls.push_back(std::move(call));
    SlotRef acknowledgement;
    if (!holdOnHost) {
        if (halError error = device_->events().acquire(&acknowledgement); error != HAL_SUCCESS) {
            return error;
        }
        finished->addWaitAcknowledgement(acknowledgement);
    }

    std::lock_guard<std::mutex> lock(mutex_);
    if (halError error = joinCopiesLocked(); error != HAL_SUCCESS) return error;
    if (!hostFuncs_) hostFuncs_ = std::make_unique<HostFuncThread>(this);
    POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendBarrier, targetLocked(), started->event, 0,
                               nullptr);
    started->submitted = true;
    ordered_ = true;
    ++appended_;
    if (holdOnHost) {
        // The barrier stays: a failure here leaves a started slot that no one waits for.
        if (halError error = holdLocked(); error != HAL_SUCCESS) return error;
        calls.front().holdsLaterWork = true;
    } else {
        POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendBarrier, list_, acknowledgement->event, 1,
                                   &finished->event);
        acknowledgement->submitted = true;
        // The host-function thread signals `finished` from the host: the slot must be reset
        // before its next use like any other signalled slot.
        finished->submitted = true;
    }
    hostFuncs_->submit(&calls);
    return HAL_SUCCESS;
}

halError Stream::markerLocked(SlotRef* marker) {
    if (halError error = joinCopiesLocked(); error != HAL_SUCCESS) return error;
    if (appended_ == 0 || (marker_ && markerAppended_ == appended_)) {
        *marker = marker_;
        return HAL_SUCCESS;
    }
    SlotRef slot;
    if (halError error = device_->events().acquire(&slot); error != HAL_SUCCESS) return error;
    POLYHAL_ZE_RETURN_IF_ERROR(zeCommandListAppendBarrier, targetLocked(), slot->event, 0, nullptr);
    slot->submitted = true;
    signalledLocked(slot);
    ordered_ = true;
    marker_ = slot;
    markerAppended_ = appended_;
    *marker = std::move(slot);
    return HAL_SUCCESS;
}

halError Stream::appendMarker(SlotRef* marker) {
    std::lock_guard<std::mutex> lock(mutex_);
    return markerLocked(marker);
}

halError Stream::query() {
    SlotRef marker;
    if (halError error = appendMarker(&marker); error != HAL_SUCCESS) return error;
    if (halError error = takeAsyncError(); error != HAL_SUCCESS) return error;
    if (!marker) return HAL_SUCCESS;
    const ze_result_t status = ze.zeEventQueryStatus.address(marker->event);
    if (status == ZE_RESULT_NOT_READY) return HAL_ERROR_NOT_READY;
    return check(status, "zeEventQueryStatus");
}

halError Stream::synchronize() {
    SlotRef marker;
    if (halError error = appendMarker(&marker); error != HAL_SUCCESS) return error;
    // Waited for without the lock, so other threads may keep appending meanwhile.
    const halError waited =
        marker ? check(ze.zeEventHostSynchronize.address(marker->event, UINT64_MAX),
                       "zeEventHostSynchronize")
               : HAL_SUCCESS;
    const halError asyncError = takeAsyncError();
    return asyncError != HAL_SUCCESS ? asyncError : waited;
}

void Stream::waitIdle() {
    SlotRef marker;
    if (appendMarker(&marker) != HAL_SUCCESS || !marker) return;
    const ze_result_t result = ze.zeEventHostSynchronize.address(marker->event, UINT64_MAX);
    if (result != ZE_RESULT_SUCCESS) {
        plugin::log(HAL_LOG_WARN, "waiting for a stream: zeEventHostSynchronize: %s",
                    resultName(result));
    }
}

halError Stream::markEnd() {
    SlotRef marker;
    return appendMarker(&marker);
}

bool Stream::isFinished() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!held_.empty()) return false;              // work held on the host
    for (const SubmittedList& run : submitted_) {  // lists destroyed only once run
        if (ze.zeEventQueryStatus.address(run.ran->event) == ZE_RESULT_NOT_READY) return false;
    }
    if (copyTail_) return false;                                // copies not followed by a marker
    if (marker_ && markerAppended_ != appended_) return false;  // work after the last marker
    return !marker_ || ze.zeEventQueryStatus.address(marker_->event) != ZE_RESULT_NOT_READY;
}

void Stream::setAsyncError(halError code, const char* message) noexcept {
    std::lock_guard<std::mutex> lock(asyncErrorMutex_);
    if (asyncError_ != HAL_SUCCESS) return;
    asyncError_ = code;
    std::snprintf(asyncErrorMessage_, sizeof asyncErrorMessage_, "%s", message);
}

halError Stream::takeAsyncError() {
    std::lock_guard<std::mutex> lock(asyncErrorMutex_);
    const halError error = asyncError_;
    if (error == HAL_SUCCESS) return HAL_SUCCESS;
    asyncError_ = HAL_SUCCESS;
    return plugin::fail(error, "%s", asyncErrorMessage_);
}

halError streamCreate(halPluginDevice handle, int priority, uint32_t /*flags: none defined*/,
                      halPluginStream* stream) {
    Device& device = plugin::fromHandle<Device>(handle);
    reapRetiredStreams(device, false);
    // Streams take the group's engines in turn, so that independent streams run side by side
    // rather than queue behind one another on one engine.
    const uint32_t engine = device.streamsCreated++ % device.computeQueueCount;
    const ze_command_queue_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                       nullptr,
                                       device.computeQueueOrdinal,
                                       engine,
                                       0,
                                       ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                       toQueuePriority(priority)};
    ze_command_list_handle_t list = nullptr;
    const ze_result_t result = device.driver->createImmediateCommandList(device.device, desc, &list);
    if (halError error = check(result, "zeCommandListCreateImmediate"); error != HAL_SUCCESS) {
        return error;
    }
    std::shared_ptr<Stream> created;
    try {
        created = std::make_shared<Stream>(&device, list, desc.priority);
    } catch (...) {
        device.driver->destroyCommandList(list);
        throw;
    }
    // From here the stream owns the list: should registering it throw, it is destroyed.
    std::lock_guard<std::mutex> lock(device.streamsMutex);
    device.streams.push_back(created);
    *stream = plugin::toHandle(created.get());
    return HAL_SUCCESS;
}

halError streamDestroy(halPluginStream handle) {
    Stream* stream = &plugin::fromHandle<Stream>(handle);
    Device& device = stream->device();
    // The command list may be destroyed only when idle, and destroying must not wait: mark the
    // end of its work and let reapRetiredStreams destroy it once that has finished. If marking
    // fails, the stream stays as it was.
    if (halError error = stream->markEnd(); error != HAL_SUCCESS) return error;
    {
        std::lock_guard<std::mutex> lock(device.streamsMutex);
        auto& streams = device.streams;
        const auto found = std::find_if(streams.begin(), streams.end(),
                                        [&](const auto& live) { return live.get() == stream; });
        // Reserved first, so that moving the stream between the lists cannot fail halfway.
        device.retiringStreams.reserve(device.retiringStreams.size() + 1);
        device.retiringStreams.push_back(std::move(*found));
        streams.erase(found);
    }
    reapRetiredStreams(device, false);
    reapRetiredGraphs(device, false);
    return HAL_SUCCESS;
}

halError streamSynchronize(halPluginStream handle) {
    Stream& stream = plugin::fromHandle<Stream>(handle);
    const halError synchronized = stream.synchronize();
    reapRetiredGraphs(stream.device(), false);
    return synchronized;
}

halError streamQuery(halPluginStream stream) {
    return plugin::fromHandle<Stream>(stream).query();
}

halError streamWaitEvent(halPluginStream stream, halPluginEvent event) {
    if (const auto& shared = plugin::fromHandle<Event>(event).shared()) {
        return waitShared(stream, shared);
    }
    const SlotRef recorded = plugin::fromHandle<Event>(event).lastRecord();
    if (!recorded) return HAL_SUCCESS;
    return plugin::fromHandle<Stream>(stream).waitFor(recorded);
}

halError streamGetNativeHandle(halPluginStream stream, void** native) {
    *native = plugin::fromHandle<Stream>(stream).list();
    return HAL_SUCCESS;
}

halError launchHostFunc(halPluginStream handle, halHostFn fn, void* userData) {
    Stream& stream = plugin::fromHandle<Stream>(handle);
    HostFuncCall call;
    call.fn = fn;
    call.userData = userData;
    EventSlotPool& events = stream.device().events();
    if (halError error = events.acquire(&call.started); error != HAL_SUCCESS) return error;
    if (halError error = events.acquire(&call.finished); error != HAL_SUCCESS) return error;
    return stream.launchHostFunc(std::move(call));
}

void reapRetiredStreams(Device& device, bool wait) {
    reapRetired(device.streamsMutex, device.retiringStreams, wait);
}

}  // namespace polyhal::level_zero
