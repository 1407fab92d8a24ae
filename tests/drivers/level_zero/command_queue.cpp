// Command queues: each has an engine (a thread, as an immediate command list has) that runs the
// commands of the regular command lists executed on it, in order across barriers only.
//
// Rules: a queue executes only closed regular lists of its own context, device and command queue
// group; a list is not executed again while an execution of it is pending (the specification:
// "the application must ensure the device is not currently referencing the command list", which
// the implementation may modify for submission); a queue is destroyed only once what it runs has
// finished; memory a recorded command uses is still allocated when the list is executed.
#include <algorithm>
#include <chrono>

#include "driver_double.hpp"
#include "entries.hpp"

namespace zedouble {
namespace {

constexpr const char* kExecute = "zeCommandQueueExecuteCommandLists";

uint64_t listsExecuted = 0;  // command lists zeCommandQueueExecuteCommandLists was given

void expectExecutable(ze_command_queue_handle_t queue, ze_command_list_handle_t list) {
    expectLive(list, Kind::CommandList, kExecute);
    if (!list->regular) {
        breach(
            "%s: command list %p is an immediate command list, which runs its commands as "
            "they are appended and is never executed on a queue",
            kExecute, static_cast<void*>(list));
    }
    if (!list->closed) {
        breach("%s: command list %p is not closed (zeCommandListClose)", kExecute,
               static_cast<void*>(list));
    }
    if (list->context != queue->context) {
        breach("%s: command list %p belongs to context %p, the queue to context %p", kExecute,
               static_cast<void*>(list), static_cast<void*>(list->context),
               static_cast<void*>(queue->context));
    }
    if (list->device != queue->device || list->ordinal != queue->ordinal) {
        breach(
            "%s: command list %p was created for device %p, command queue group %u; the queue "
            "is of device %p, group %u",
            kExecute, static_cast<void*>(list), static_cast<void*>(list->device), list->ordinal,
            static_cast<void*>(queue->device), queue->ordinal);
    }
    if (list->pendingExecutions > 0) {
        breach(
            "%s: command list %p is executed while an earlier execution of it has not finished: "
            "the device may still be reading it",
            kExecute, static_cast<void*>(list));
    }
    for (const Command& command : list->recorded) {
        for (uintptr_t base : command.uses) {
            if (state().allocations.count(base) == 0) {
                breach(
                    "%s: command list %p has a command (%s) using memory at %p, freed since "
                    "it was appended",
                    kExecute, static_cast<void*>(list), command.call,
                    reinterpret_cast<void*>(base));
            }
        }
    }
}

}  // namespace

ze_result_t ZE_APICALL commandQueueCreate(ze_context_handle_t context, ze_device_handle_t device,
                                          const ze_command_queue_desc_t* desc,
                                          ze_command_queue_handle_t* queue) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeCommandQueueCreate");
    expectDeviceOfContext(device, context, "zeCommandQueueCreate");
    if (desc->index >= queueCount(desc->ordinal)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    auto* created = new _ze_command_queue_handle_t{
        context, device, desc->ordinal, startEngine(context, device, desc->ordinal, desc->index)};
    addHandle(created, Kind::CommandQueue);
    *queue = created;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL commandQueueDestroy(ze_command_queue_handle_t queue) {
    {
        std::lock_guard<std::mutex> lock(state().mutex);
        expectLive(queue, Kind::CommandQueue, "zeCommandQueueDestroy");
        if (queue->engine->inFlight > 0) {
            breach(
                "zeCommandQueueDestroy: command queue %p still has %zu command(s) of executed "
                "lists that have not finished",
                static_cast<void*>(queue), queue->engine->inFlight);
        }
        removeHandle(queue);
    }
    stopEngine(queue->engine);
    delete queue;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL commandQueueExecuteCommandLists(ze_command_queue_handle_t queue,
                                                       uint32_t numLists,
                                                       ze_command_list_handle_t* lists,
                                                       ze_fence_handle_t fence) {
    if (fence != nullptr) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;  // the double has none
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(queue, Kind::CommandQueue, kExecute);
    for (uint32_t i = 0; i < numLists; ++i) expectExecutable(queue, lists[i]);
    for (uint32_t i = 0; i < numLists; ++i) {
        ze_command_list_handle_t list = lists[i];
        ++listsExecuted;
        if (list->recorded.empty()) continue;
        ++list->pendingExecutions;
        for (size_t at = 0; at < list->recorded.size(); ++at) {
            Command command = list->recorded[at];
            command.call = kExecute;
            if (at + 1 == list->recorded.size()) command.endsExecutionOf = list;
            enqueueLocked(queue->engine, std::move(command));
        }
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL commandQueueSynchronize(ze_command_queue_handle_t queue, uint64_t timeout) {
    std::unique_lock<std::mutex> lock(state().mutex);
    expectLive(queue, Kind::CommandQueue, "zeCommandQueueSynchronize");
    const auto idle = [&] { return queue->engine->inFlight == 0 || state().deviceLost; };
    if (timeout == UINT64_MAX) {
        state().eventsChanged.wait(lock, idle);
    } else if (!state().eventsChanged.wait_for(
                   lock, std::chrono::nanoseconds(std::min<uint64_t>(timeout, INT64_MAX)), idle)) {
        return ZE_RESULT_NOT_READY;
    }
    return state().deviceLost ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

}  // namespace zedouble

// For tests: how many command lists zeCommandQueueExecuteCommandLists has been given.
extern "C" __attribute__((visibility("default"))) uint64_t zedoubleCommandListsExecuted() {
    std::lock_guard<std::mutex> lock(zedouble::state().mutex);
    return zedouble::listsExecuted;
}
