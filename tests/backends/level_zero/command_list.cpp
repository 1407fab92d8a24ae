// Command lists. An immediate one runs its commands on a ring's thread (its own, or its engine's
// with shared rings), asynchronously to the caller, in order across barriers and in reverse order
// between them (see run()). A regular one records commands until closed;
// zeCommandListImmediateAppendCommandListsExp queues copies of them on an immediate list, where
// they run as the immediate list's own.
//
// Rules: a command list is used from one thread at a time, only with events and memory of its
// own context, and destroyed only once its commands have finished; memory a command uses is not
// freed before the command has run. A regular list is not appended to once closed, is submitted
// only closed, to an immediate list of its context, device and command queue group, and only
// once its previous submission has finished (Level Zero lets no list be submitted while the
// device may still run it), with its kernels and memory alive. The events of a regular list's
// commands are checked when it is submitted, as an immediate list's are when appended: a list
// that signals an event can run again only once the event has been reset.
#include <chrono>
#include <cstring>
#include <thread>
#include <tuple>

#include "driver_double.hpp"
#include "entries.hpp"

namespace zedouble {
namespace {

// Marks a command list as being appended to for the duration of one call.
class AppendScope {
  public:
    AppendScope(ze_command_list_handle_t list, const char* call) : list_(list) {
        if (list_->appending.exchange(true)) {
            breach(
                "%s: two threads append to command list %p at once; Level Zero command lists "
                "are not thread-safe",
                call, static_cast<void*>(list));
        }
    }
    ~AppendScope() { list_->appending = false; }
    AppendScope(const AppendScope&) = delete;
    AppendScope& operator=(const AppendScope&) = delete;

  private:
    ze_command_list_handle_t list_;
};

void expectSameContext(ze_command_list_handle_t list, ze_event_handle_t event, const char* call) {
    expectLive(event, Kind::Event, call);
    if (event->pool->context != list->context) {
        breach("%s: event %p belongs to context %p, the command list to context %p", call,
               static_cast<void*>(event), static_cast<void*>(event->pool->context),
               static_cast<void*>(list->context));
    }
}

// Commands (barriers aside) run so far, by command queue group.
std::map<uint32_t, uint64_t> commandsRunOn;
// Submissions of regular lists so far (zeCommandListImmediateAppendCommandListsExp calls), and
// the regular lists they submitted.
uint64_t submissions = 0;
uint64_t listsSubmitted = 0;

// Runs the ring's commands. Level Zero 1.4 orders commands only across barriers, so commands
// queued one after another with no barrier between them run last first: a caller that relies
// on order without a barrier sees wrong results. A command waiting for events holds every
// command queued after it on the ring, of any list.
void run(Ring* ring) {
    State& shared = state();
    std::unique_lock<std::mutex> lock(shared.mutex);
    for (;;) {
        ring->wake.wait(lock, [&] { return ring->stopping || !ring->queue.empty(); });
        if (ring->queue.empty()) return;
        std::vector<Command> batch;
        batch.push_back(std::move(ring->queue.front()));
        ring->queue.pop_front();
        while (batch.front().work && !ring->queue.empty() && ring->queue.front().work &&
               ring->queue.front().waits.empty() &&
               ring->queue.front().queuedOn == batch.front().queuedOn) {
            batch.push_back(std::move(ring->queue.front()));
            ring->queue.pop_front();
        }
        const std::vector<ze_event_handle_t>& waits = batch.front().waits;
        shared.eventsChanged.wait(lock, [&] {
            for (ze_event_handle_t event : waits) {
                if (!event->signalled) return false;
            }
            return true;
        });
        for (ze_event_handle_t event : waits) --event->pendingWaits;
        lock.unlock();
        // Copy engines start late, so that work ordered after a copy only by chance shows.
        if (!ring->computeCapable) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        for (auto command = batch.rbegin(); command != batch.rend(); ++command) {
            if (command->work) command->work();
        }
        lock.lock();
        for (const Command& command : batch) {
            if (command.work) ++commandsRunOn[ring->ordinal];
            if (command.runOf != nullptr) --command.runOf->submittedPending;
            for (uintptr_t base : command.uses) --shared.allocations.at(base).pendingUses;
            --command.queuedOn->inFlight;
            if (command.signal != nullptr) {
                --command.signal->pendingSignals;
                command.signal->signalled = true;
            }
        }
        shared.eventsChanged.notify_all();
    }
}

}  // namespace

namespace {

// Queues `command` on the immediate list `list` (callers hold the mutex).
void queueLocked(ze_command_list_handle_t list, Command command, uint32_t numWaitEvents,
                 ze_event_handle_t* waitEvents) {
    if (command.signal != nullptr) {
        expectSameContext(list, command.signal, command.call);
        expectSignallable(command.signal, command.call);
        ++command.signal->pendingSignals;
    }
    for (uintptr_t base : command.uses) ++state().allocations.at(base).pendingUses;
    for (uint32_t i = 0; i < numWaitEvents; ++i) {
        expectSameContext(list, waitEvents[i], command.call);
        ++waitEvents[i]->pendingWaits;
        command.waits.push_back(waitEvents[i]);
    }
    command.queuedOn = list;
    list->ring->queue.push_back(std::move(command));
    ++list->inFlight;
    list->ring->wake.notify_one();
}

Ring* startRing(uint32_t ordinal) {
    auto* ring = new Ring;
    ring->ordinal = ordinal;
    ring->computeCapable = ordinal == 0;
    ring->thread = std::thread(run, ring);
    return ring;
}

// The ring of an immediate list created on engine `index` of group `ordinal` of `device`: with
// shared rings, the engine's one, started with its first list and kept until the process exits;
// otherwise one of the list's own. Callers hold the mutex.
//
// compute-runtime gives every immediate list the command stream receiver of its engine
// (level_zero/core/source/cmdlist/cmdlist.cpp:533, device/device.cpp:1936), unless secondary
// contexts are enabled (device.cpp:1896, 1965), which they are not by default
// (shared/source/os_interface/product_helper.inl:440).
Ring* ringFor(ze_device_handle_t device, uint32_t ordinal, uint32_t index) {
    if (!sharedRings()) return startRing(ordinal);
    static std::map<std::tuple<ze_device_handle_t, uint32_t, uint32_t>, Ring*> rings;
    Ring*& ring = rings[{device, ordinal, index}];
    if (ring == nullptr) ring = startRing(ordinal);
    return ring;
}

}  // namespace

ze_result_t append(ze_command_list_handle_t list, Command command, uint32_t numWaitEvents,
                   ze_event_handle_t* waitEvents) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(list, Kind::CommandList, command.call);
    if (list->immediate) {
        queueLocked(list, std::move(command), numWaitEvents, waitEvents);
        return ZE_RESULT_SUCCESS;
    }
    if (list->closed) {
        breach("%s: command list %p was closed; a closed list is not appended to until reset",
               command.call, static_cast<void*>(list));
    }
    // Events are checked when the list is submitted, as the immediate list's own commands'.
    if (command.signal != nullptr) expectSameContext(list, command.signal, command.call);
    for (uint32_t i = 0; i < numWaitEvents; ++i) {
        expectSameContext(list, waitEvents[i], command.call);
        command.waits.push_back(waitEvents[i]);
    }
    list->recorded.push_back(std::move(command));
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL commandListCreate(ze_context_handle_t context, ze_device_handle_t device,
                                         const ze_command_list_desc_t* desc,
                                         ze_command_list_handle_t* list) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeCommandListCreate");
    if (device->driver != context->driver) {
        breach("zeCommandListCreate: device %p is not a device of context %p",
               static_cast<void*>(device), static_cast<void*>(context));
    }
    if (queueCount(desc->commandQueueGroupOrdinal) == 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    auto* created = new _ze_command_list_handle_t;
    created->context = context;
    created->device = device;
    created->ordinal = desc->commandQueueGroupOrdinal;
    created->index = 0;
    created->computeCapable = desc->commandQueueGroupOrdinal == 0;
    created->immediate = false;
    addHandle(created, Kind::CommandList);
    *list = created;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL commandListClose(ze_command_list_handle_t list) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(list, Kind::CommandList, "zeCommandListClose");
    list->closed = true;
    return ZE_RESULT_SUCCESS;
}

// The submission's commands run as the immediate list's own: after earlier commands only across
// a barrier, and `signal` once they have all finished.
ze_result_t ZE_APICALL commandListImmediateAppendCommandLists(
    ze_command_list_handle_t immediate, uint32_t numCommandLists, ze_command_list_handle_t* lists,
    ze_event_handle_t signal, uint32_t numWaitEvents, ze_event_handle_t* waitEvents) {
    constexpr const char* kCall = "zeCommandListImmediateAppendCommandListsExp";
    AppendScope scope(immediate, kCall);
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(immediate, Kind::CommandList, kCall);
    if (!immediate->immediate) {
        breach("%s: command list %p is not an immediate command list", kCall,
               static_cast<void*>(immediate));
    }
    std::vector<Command> run;
    for (uint32_t i = 0; i < numCommandLists; ++i) {
        ze_command_list_handle_t list = lists[i];
        expectLive(list, Kind::CommandList, kCall);
        if (list->immediate) {
            breach(
                "%s: command list %p is an immediate command list; only regular lists are "
                "submitted",
                kCall, static_cast<void*>(list));
        }
        if (!list->closed) {
            breach("%s: command list %p is submitted before zeCommandListClose", kCall,
                   static_cast<void*>(list));
        }
        if (list->context != immediate->context || list->device != immediate->device ||
            list->ordinal != immediate->ordinal) {
            breach(
                "%s: command list %p was made for another context, device or command queue "
                "group than immediate list %p",
                kCall, static_cast<void*>(list), static_cast<void*>(immediate));
        }
        if (list->submittedPending > 0) {
            breach(
                "%s: command list %p is submitted again while %zu command(s) of its previous "
                "submission have not finished; a list the device may still run must not be "
                "submitted",
                kCall, static_cast<void*>(list), list->submittedPending);
        }
        for (const Command& recorded : list->recorded) {
            if (recorded.kernel != nullptr) expectLive(recorded.kernel, Kind::Kernel, kCall);
            for (uintptr_t base : recorded.uses) {
                if (state().allocations.count(base) == 0) {
                    breach(
                        "%s: command list %p is submitted with a command using memory at "
                        "%#zx, which has been freed since it was appended",
                        kCall, static_cast<void*>(list), static_cast<size_t>(base));
                }
            }
            run.push_back(recorded);
            run.back().runOf = list;
        }
    }
    if (signal != nullptr || run.empty()) {
        Command end(kCall);
        end.signal = signal;
        // Signals once the commands before it in its batch have run, without ordering the
        // commands after it, as a barrier would.
        end.work = [] {};
        run.push_back(std::move(end));
    }
    for (size_t i = 0; i < run.size(); ++i) {
        if (run[i].runOf != nullptr) ++run[i].runOf->submittedPending;
        // The submission's waits go to its first command, with that command's own.
        std::vector<ze_event_handle_t> waits = std::move(run[i].waits);
        run[i].waits.clear();
        if (i == 0) waits.insert(waits.end(), waitEvents, waitEvents + numWaitEvents);
        queueLocked(immediate, std::move(run[i]), static_cast<uint32_t>(waits.size()),
                    waits.data());
    }
    ++submissions;
    listsSubmitted += numCommandLists;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL commandListCreateImmediate(ze_context_handle_t context,
                                                  ze_device_handle_t device,
                                                  const ze_command_queue_desc_t* desc,
                                                  ze_command_list_handle_t* list) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeCommandListCreateImmediate");
    if (device->driver != context->driver) {
        breach("zeCommandListCreateImmediate: device %p is not a device of context %p",
               static_cast<void*>(device), static_cast<void*>(context));
    }
    if (desc->index >= queueCount(desc->ordinal)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    auto* created = new _ze_command_list_handle_t;
    created->context = context;
    created->device = device;
    created->ordinal = desc->ordinal;
    created->index = desc->index;
    created->computeCapable = desc->ordinal == 0;
    created->ring = ringFor(device, desc->ordinal, desc->index);
    addHandle(created, Kind::CommandList);
    *list = created;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL commandListDestroy(ze_command_list_handle_t list) {
    {
        std::lock_guard<std::mutex> lock(state().mutex);
        expectLive(list, Kind::CommandList, "zeCommandListDestroy");
        // Commands a lost device never finished are over: compute-runtime's waits return at a
        // detected hang, and its destroys and frees go ahead.
        const bool lost = state().deviceLost;
        if (!list->immediate) {
            if (list->submittedPending > 0 && !lost) {
                breach(
                    "zeCommandListDestroy: command list %p is destroyed while %zu command(s) of "
                    "its submission have not finished",
                    static_cast<void*>(list), list->submittedPending);
            }
            removeHandle(list);
            delete list;
            return ZE_RESULT_SUCCESS;
        }
        if (list->inFlight > 0 && !lost) {
            breach(
                "zeCommandListDestroy: command list %p still has %zu command(s) that have not "
                "finished",
                static_cast<void*>(list), list->inFlight);
        }
        removeHandle(list);
        if (sharedRings()) {
            delete list;
            return ZE_RESULT_SUCCESS;
        }
        list->ring->stopping = true;
        list->ring->wake.notify_one();
    }
    list->ring->thread.join();
    delete list->ring;
    delete list;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL commandListAppendBarrier(ze_command_list_handle_t list,
                                                ze_event_handle_t signal, uint32_t numWaitEvents,
                                                ze_event_handle_t* waitEvents) {
    AppendScope scope(list, "zeCommandListAppendBarrier");
    Command command("zeCommandListAppendBarrier");
    command.signal = signal;
    return append(list, std::move(command), numWaitEvents, waitEvents);
}

ze_result_t ZE_APICALL commandListAppendMemoryCopy(ze_command_list_handle_t list, void* dst,
                                                   const void* src, size_t size,
                                                   ze_event_handle_t signal, uint32_t numWaitEvents,
                                                   ze_event_handle_t* waitEvents) {
    constexpr const char* kCall = "zeCommandListAppendMemoryCopy";
    AppendScope scope(list, kCall);
    Command command(kCall);
    {
        std::lock_guard<std::mutex> lock(state().mutex);
        char* to = hostAccessFor(list->context, dst, size, kCall, &command.uses);
        const char* from = hostAccessFor(list->context, src, size, kCall, &command.uses);
        if (to < from + size && from < to + size) return ZE_RESULT_ERROR_OVERLAPPING_REGIONS;
        command.work = [to, from, size] { std::memcpy(to, from, size); };
    }
    command.signal = signal;
    return append(list, std::move(command), numWaitEvents, waitEvents);
}

// Bytes a region spans from `base`: its origin, then depth slices of height rows of width bytes.
// False when it does not fit the pitches (a row past its pitch, a slice past its slice pitch).
static bool regionSpan(const ze_copy_region_t& region, uint32_t pitch, uint32_t slicePitch,
                       size_t* offset, size_t* span) {
    const size_t rows = size_t{pitch} * (region.height - 1) + region.width;
    if (size_t{region.originX} + region.width > pitch ||
        (region.depth > 1 && size_t{region.originY} * pitch + rows > slicePitch)) {
        return false;
    }
    *offset = size_t{slicePitch} * region.originZ + size_t{pitch} * region.originY + region.originX;
    *span = size_t{slicePitch} * (region.depth - 1) + rows;
    return true;
}

ze_result_t ZE_APICALL commandListAppendMemoryCopyRegion(
    ze_command_list_handle_t list, void* dst, const ze_copy_region_t* dstRegion, uint32_t dstPitch,
    uint32_t dstSlicePitch, const void* src, const ze_copy_region_t* srcRegion, uint32_t srcPitch,
    uint32_t srcSlicePitch, ze_event_handle_t signal, uint32_t numWaitEvents,
    ze_event_handle_t* waitEvents) {
    constexpr const char* kCall = "zeCommandListAppendMemoryCopyRegion";
    AppendScope scope(list, kCall);
    if (dst == nullptr || src == nullptr || dstRegion == nullptr || srcRegion == nullptr) {
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    }
    // The specification: both regions have the same width, height and depth.
    if (dstRegion->width != srcRegion->width || dstRegion->height != srcRegion->height ||
        dstRegion->depth != srcRegion->depth) {
        breach("%s: the regions differ in size (%ux%ux%u and %ux%ux%u)", kCall, dstRegion->width,
               dstRegion->height, dstRegion->depth, srcRegion->width, srcRegion->height,
               srcRegion->depth);
    }
    const ze_copy_region_t extent = *dstRegion;
    if (extent.width == 0 || extent.height == 0 || extent.depth == 0) {
        return ZE_RESULT_ERROR_INVALID_SIZE;
    }
    size_t dstOffset = 0, dstSpan = 0, srcOffset = 0, srcSpan = 0;
    if (!regionSpan(*dstRegion, dstPitch, dstSlicePitch, &dstOffset, &dstSpan) ||
        !regionSpan(*srcRegion, srcPitch, srcSlicePitch, &srcOffset, &srcSpan)) {
        return ZE_RESULT_ERROR_INVALID_SIZE;
    }
    Command command(kCall);
    {
        std::lock_guard<std::mutex> lock(state().mutex);
        char* to = hostAccessFor(list->context, static_cast<char*>(dst) + dstOffset, dstSpan, kCall,
                                 &command.uses);
        const char* from = hostAccessFor(list->context, static_cast<const char*>(src) + srcOffset,
                                         srcSpan, kCall, &command.uses);
        if (to < from + srcSpan && from < to + dstSpan) return ZE_RESULT_ERROR_OVERLAPPING_REGIONS;
        command.work = [=] {
            for (uint32_t slice = 0; slice < extent.depth; ++slice) {
                for (uint32_t row = 0; row < extent.height; ++row) {
                    std::memcpy(to + size_t{slice} * dstSlicePitch + size_t{row} * dstPitch,
                                from + size_t{slice} * srcSlicePitch + size_t{row} * srcPitch,
                                extent.width);
                }
            }
        };
    }
    command.signal = signal;
    return append(list, std::move(command), numWaitEvents, waitEvents);
}

ze_result_t ZE_APICALL commandListAppendMemoryFill(ze_command_list_handle_t list, void* ptr,
                                                   const void* pattern, size_t patternSize,
                                                   size_t size, ze_event_handle_t signal,
                                                   uint32_t numWaitEvents,
                                                   ze_event_handle_t* waitEvents) {
    constexpr const char* kCall = "zeCommandListAppendMemoryFill";
    AppendScope scope(list, kCall);
    if (patternSize == 0 || (patternSize & (patternSize - 1)) != 0 || size % patternSize != 0) {
        return ZE_RESULT_ERROR_INVALID_SIZE;
    }
    Command command(kCall);
    {
        std::lock_guard<std::mutex> lock(state().mutex);
        const Allocation* allocation = findAllocation(ptr, size, kCall);
        if (allocation == nullptr) {
            breach(
                "%s: %p is not memory allocated by this driver; a fill's destination must be "
                "device or host memory of the context",
                kCall, ptr);
        }
        char* to = hostAccessFor(list->context, ptr, size, kCall, &command.uses);
        // The pattern is read during the call.
        std::vector<char> bytes(static_cast<const char*>(pattern),
                                static_cast<const char*>(pattern) + patternSize);
        command.work = [to, size, bytes = std::move(bytes)] {
            for (size_t offset = 0; offset < size; offset += bytes.size()) {
                std::memcpy(to + offset, bytes.data(), bytes.size());
            }
        };
    }
    command.signal = signal;
    return append(list, std::move(command), numWaitEvents, waitEvents);
}

ze_result_t ZE_APICALL commandListAppendWriteGlobalTimestamp(ze_command_list_handle_t list,
                                                             uint64_t* dst,
                                                             ze_event_handle_t signal,
                                                             uint32_t numWaitEvents,
                                                             ze_event_handle_t* waitEvents) {
    constexpr const char* kCall = "zeCommandListAppendWriteGlobalTimestamp";
    AppendScope scope(list, kCall);
    Command command(kCall);
    {
        std::lock_guard<std::mutex> lock(state().mutex);
        if (findAllocation(dst, sizeof *dst, kCall) == nullptr) {
            breach("%s: %p is not memory allocated by this driver", kCall, static_cast<void*>(dst));
        }
        auto* to = reinterpret_cast<uint64_t*>(
            hostAccessFor(list->context, dst, sizeof *dst, kCall, &command.uses));
        command.work = [to] {
            *to = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::steady_clock::now().time_since_epoch())
                                            .count());
        };
    }
    command.signal = signal;
    return append(list, std::move(command), numWaitEvents, waitEvents);
}

ze_result_t ZE_APICALL commandListAppendLaunchKernel(
    ze_command_list_handle_t list, ze_kernel_handle_t kernel, const ze_group_count_t* groups,
    ze_event_handle_t signal, uint32_t numWaitEvents, ze_event_handle_t* waitEvents) {
    constexpr const char* kCall = "zeCommandListAppendLaunchKernel";
    AppendScope scope(list, kCall);
    if (!list->computeCapable) return ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE;
    Command command(kCall);
    command.work = captureLaunch(list, kernel, *groups, &command.uses);
    command.kernel = kernel;
    if (!command.work) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    command.signal = signal;
    return append(list, std::move(command), numWaitEvents, waitEvents);
}

}  // namespace zedouble

// For tests: the engine (command queue group and index within it) an immediate command list was
// created on, which Level Zero 1.4 offers no query for.
extern "C" __attribute__((visibility("default"))) ze_result_t zedoubleCommandListEngine(
    ze_command_list_handle_t list, uint32_t* ordinal, uint32_t* index) {
    std::lock_guard<std::mutex> lock(zedouble::state().mutex);
    zedouble::expectLive(list, zedouble::Kind::CommandList, "zedoubleCommandListEngine");
    *ordinal = list->ordinal;
    *index = list->index;
    return ZE_RESULT_SUCCESS;
}

// For tests: how many commands other than barriers lists of command queue group `ordinal` have
// run.
extern "C" __attribute__((visibility("default"))) uint64_t zedoubleCommandsRunOn(uint32_t ordinal) {
    std::lock_guard<std::mutex> lock(zedouble::state().mutex);
    return zedouble::commandsRunOn[ordinal];
}

// For tests: how many times regular command lists have been submitted to immediate ones.
extern "C" __attribute__((visibility("default"))) uint64_t zedoubleCommandListSubmissions() {
    std::lock_guard<std::mutex> lock(zedouble::state().mutex);
    return zedouble::submissions;
}

// For tests: how many regular command lists those submissions held.
extern "C" __attribute__((visibility("default"))) uint64_t zedoubleRegularListsSubmitted() {
    std::lock_guard<std::mutex> lock(zedouble::state().mutex);
    return zedouble::listsSubmitted;
}
