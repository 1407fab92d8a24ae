// Event pools and events, with Level Zero's rules for them:
//   - an event is signalled once, then must be reset (zeEventHostReset) before it is signalled
//     again: neither the host nor an appended command may signal an event that is signalled or
//     has a signal pending;
//   - it is not reset while an appended command still waits for it or will signal it;
//   - the host waits only for events of host-visible pools;
//   - events are used only in their own context, and not destroyed while in use.
#include <algorithm>
#include <chrono>

#include "driver_double.hpp"
#include "entries.hpp"

namespace zedouble {
namespace {

void expectHostVisible(ze_event_handle_t event, const char* call) {
    if (!event->pool->hostVisible) {
        breach("%s: event %p belongs to a pool created without ZE_EVENT_POOL_FLAG_HOST_VISIBLE",
               call, static_cast<void*>(event));
    }
}

// zeEventHostSynchronize calls that found their event unsignalled and spun.
uint64_t spinningWaits = 0;

}  // namespace

void expectSignallable(ze_event_handle_t event, const char* call) {
    if (event->signalled || event->pendingSignals > 0) {
        breach(
            "%s: event %p (index %u) is %s: a Level Zero event must be reset "
            "(zeEventHostReset) before it is signalled again, so whoever handed it out "
            "handed out an event that was never reset",
            call, static_cast<void*>(event), event->index,
            event->signalled ? "already signalled" : "already to be signalled by a command");
    }
}

ze_result_t ZE_APICALL eventPoolCreate(ze_context_handle_t context,
                                       const ze_event_pool_desc_t* desc, uint32_t numDevices,
                                       ze_device_handle_t* devices, ze_event_pool_handle_t* pool) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeEventPoolCreate");
    for (uint32_t i = 0; i < numDevices; ++i) {
        if (devices[i]->driver != context->driver) {
            breach("zeEventPoolCreate: device %p is not a device of context %p",
                   static_cast<void*>(devices[i]), static_cast<void*>(context));
        }
    }
    auto* created =
        new _ze_event_pool_handle_t{context, (desc->flags & ZE_EVENT_POOL_FLAG_HOST_VISIBLE) != 0,
                                    std::vector<ze_event_handle_t>(desc->count, nullptr)};
    addHandle(created, Kind::EventPool);
    *pool = created;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL eventPoolDestroy(ze_event_pool_handle_t pool) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(pool, Kind::EventPool, "zeEventPoolDestroy");
    for (ze_event_handle_t event : pool->events) {
        if (event != nullptr) {
            breach("zeEventPoolDestroy: event %u of pool %p still exists", event->index,
                   static_cast<void*>(pool));
        }
    }
    removeHandle(pool);
    delete pool;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL eventCreate(ze_event_pool_handle_t pool, const ze_event_desc_t* desc,
                                   ze_event_handle_t* event) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(pool, Kind::EventPool, "zeEventCreate");
    if (desc->index >= pool->events.size()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (pool->events[desc->index] != nullptr) {
        breach("zeEventCreate: index %u of pool %p already has an event", desc->index,
               static_cast<void*>(pool));
    }
    auto* created = new _ze_event_handle_t;
    created->pool = pool;
    created->index = desc->index;
    pool->events[desc->index] = created;
    addHandle(created, Kind::Event);
    *event = created;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL eventDestroy(ze_event_handle_t event) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(event, Kind::Event, "zeEventDestroy");
    if (event->pendingSignals > 0 || event->pendingWaits > 0) {
        breach("zeEventDestroy: event %p is still in use by %d appended command(s)",
               static_cast<void*>(event), event->pendingSignals + event->pendingWaits);
    }
    event->pool->events[event->index] = nullptr;
    removeHandle(event);
    delete event;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL eventHostSignal(ze_event_handle_t event) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(event, Kind::Event, "zeEventHostSignal");
    expectHostVisible(event, "zeEventHostSignal");
    expectSignallable(event, "zeEventHostSignal");
    event->signalled = true;
    state().eventsChanged.notify_all();
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL eventHostSynchronize(ze_event_handle_t event, uint64_t timeout) {
    std::unique_lock<std::mutex> lock(state().mutex);
    expectLive(event, Kind::Event, "zeEventHostSynchronize");
    expectHostVisible(event, "zeEventHostSynchronize");
    // As on Intel's driver, the wait polls without sleeping: it occupies a core for as long as
    // it lasts (a caller that must not do so polls zeEventQueryStatus and sleeps by itself).
    const auto start = std::chrono::steady_clock::now();
    const std::chrono::nanoseconds limit(std::min<uint64_t>(timeout, INT64_MAX));
    if (!event->signalled && !state().deviceLost) ++spinningWaits;
    while (!event->signalled && !state().deviceLost) {
        if (timeout != UINT64_MAX && std::chrono::steady_clock::now() - start >= limit) {
            return ZE_RESULT_NOT_READY;
        }
        lock.unlock();
        for (int spin = 0; spin < 64; ++spin) __builtin_ia32_pause();
        lock.lock();
    }
    return state().deviceLost ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL eventQueryStatus(ze_event_handle_t event) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(event, Kind::Event, "zeEventQueryStatus");
    expectHostVisible(event, "zeEventQueryStatus");
    if (state().deviceLost) return ZE_RESULT_ERROR_DEVICE_LOST;
    return event->signalled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t ZE_APICALL eventHostReset(ze_event_handle_t event) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(event, Kind::Event, "zeEventHostReset");
    expectHostVisible(event, "zeEventHostReset");
    if (event->pendingWaits > 0) {
        breach(
            "zeEventHostReset: event %p (index %u) is reset while %d appended command(s) "
            "still wait for it: they would wait for a later signal, or forever",
            static_cast<void*>(event), event->index, event->pendingWaits);
    }
    if (event->pendingSignals > 0) {
        breach(
            "zeEventHostReset: event %p (index %u) is reset while a command that signals it "
            "has not run yet",
            static_cast<void*>(event), event->index);
    }
    event->signalled = false;
    return ZE_RESULT_SUCCESS;
}

}  // namespace zedouble

// For tests: how many zeEventHostSynchronize calls have occupied a core waiting.
extern "C" __attribute__((visibility("default"))) uint64_t zedoubleSpinningWaits() {
    std::lock_guard<std::mutex> lock(zedouble::state().mutex);
    return zedouble::spinningWaits;
}
