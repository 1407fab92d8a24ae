// Sharing memory and events between processes: handles, their rules within one process, and
// two processes exchanging a block and ordering signals (the other process is polyhal-cts again,
// in a child role: ipc_child.cpp).
#include <cstring>
#include <string>
#include <vector>

#include "cts.hpp"
#include "ipc_process.hpp"

using namespace std::chrono_literals;

namespace {

bool has(uint64_t capability) {
    return (cts::deviceProperties().capabilities & capability) != 0;
}

// The handles the role of `child` sends first.
cts::ipc::Message receiveHandles(const cts::ipc::Child& child) {
    REQUIRE(child.started());
    cts::ipc::Message message;
    std::string error;
    const bool received = cts::ipc::receive(child.fromChild(), &message, 20s, &error);
    INFO(error);
    REQUIRE(received);
    INFO("child: " << message.what << " " << message.text);
    REQUIRE(std::string(message.what) == "handles");
    return message;
}

}  // namespace

TEST_CASE("a backend without IPC says NOT_SUPPORTED", "[ipc]") {
    halEvent event = nullptr;
    const halError created =
        halCreateEventWithFlag(&event, HAL_EVENT_INTERPROCESS | HAL_EVENT_DISABLE_TIMING);
    if (has(HAL_DEVICE_CAP_IPC_EVENTS)) {
        HAL_CHECK_OK(created);
        HAL_CHECK_OK(halDestroyEvent(event));
    } else {
        CHECK(created == HAL_ERROR_NOT_SUPPORTED);
        CHECK(std::string(halGetLastErrorMessage()).find("HAL_EVENT_INTERPROCESS") !=
              std::string::npos);
    }
    cts::DeviceMemory block(4096);
    halIpcMemHandle handle;
    const halError exported = halIpcGetMemHandle(&handle, block.get());
    if (has(HAL_DEVICE_CAP_IPC_MEMORY)) {
        HAL_CHECK_OK(exported);
    } else {
        CHECK(exported == HAL_ERROR_NOT_SUPPORTED);
        CHECK(std::string(halGetLastErrorMessage()).find("cannot share memory") !=
              std::string::npos);
    }
}

TEST_CASE("a pool block is exported by its start; the handle is refused in its own process",
          "[ipc]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_IPC_MEMORY);
    cts::DeviceMemory block(1000);
    halIpcMemHandle first, second;
    HAL_REQUIRE_OK(halIpcGetMemHandle(&first, block.get()));
    HAL_REQUIRE_OK(halIpcGetMemHandle(&second, block.get()));
    CHECK(std::memcmp(&first, &second, sizeof first) == 0);
    CHECK(halIpcGetMemHandle(&first, block.get<unsigned char>() + 256) == HAL_ERROR_INVALID_VALUE);
    void* opened = nullptr;
    CHECK(halIpcOpenMemHandle(&opened, first, 0) == HAL_ERROR_INVALID_VALUE);
    CHECK(std::string(halGetLastErrorMessage()).find("this process") != std::string::npos);
    CHECK(opened == nullptr);
}

TEST_CASE("an interprocess event orders work like any event", "[ipc][event]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_IPC_EVENTS);
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_HOST_FUNCTIONS);
    cts::Event event(HAL_EVENT_INTERPROCESS | HAL_EVENT_DISABLE_TIMING);
    HAL_CHECK_OK(halQueryEvent(event));  // never recorded
    HAL_CHECK_OK(halSynchronizeEvent(event));
    cts::Stream producer, consumer;
    std::atomic<bool> after{false};
    {
        cts::Gate gate;
        gate.enqueue(producer);
        HAL_REQUIRE_OK(halRecordEvent(event, producer));
        CHECK(halQueryEvent(event) == HAL_ERROR_NOT_READY);
        HAL_REQUIRE_OK(halStreamWaitEvent(consumer, event));
        cts::enqueueSet(consumer, &after);
        std::this_thread::sleep_for(20ms);
        CHECK_FALSE(after.load());
        gate.open();
        HAL_REQUIRE_OK(halSynchronizeEvent(event));
        HAL_CHECK_OK(halQueryEvent(event));
    }
    HAL_REQUIRE_OK(halSynchronizeStream(consumer));
    CHECK(after.load());
    halIpcEventHandle handle;
    HAL_REQUIRE_OK(halIpcGetEventHandle(&handle, event));
    halEvent opened = nullptr;
    CHECK(halIpcOpenEventHandle(&opened, handle) == HAL_ERROR_INVALID_VALUE);
    float ms = 0;
    CHECK(halEventElapsedTime(&ms, event, event) == HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("two processes share a block, ordered by interprocess events",
          "[ipc][process][independent_streams]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_IPC_MEMORY);
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_IPC_EVENTS);
    constexpr size_t kBytes = 1u << 20;
    cts::DeviceMemory block(kBytes);
    cts::Stream stream;
    cts::Event filled(HAL_EVENT_INTERPROCESS | HAL_EVENT_DISABLE_TIMING);
    cts::Event written(HAL_EVENT_INTERPROCESS | HAL_EVENT_DISABLE_TIMING);
    HAL_REQUIRE_OK(halMemset(block.get(), kBytes, 0, kBytes));

    cts::ipc::Message handles =
        cts::ipc::makeMessage("handles", std::to_string(kBytes) + " events");
    halIpcMemHandle memory;
    halIpcEventHandle events[2];
    HAL_REQUIRE_OK(halIpcGetMemHandle(&memory, block.get()));
    HAL_REQUIRE_OK(halIpcGetEventHandle(&events[0], filled));
    HAL_REQUIRE_OK(halIpcGetEventHandle(&events[1], written));
    std::memcpy(handles.handles[0], memory.reserved, sizeof memory.reserved);
    std::memcpy(handles.handles[1], events[0].reserved, sizeof events[0].reserved);
    std::memcpy(handles.handles[2], events[1].reserved, sizeof events[1].reserved);

    // The fill is held back until the other process has been told to wait for it.
    cts::Gate gate;
    if (has(HAL_DEVICE_CAP_HOST_FUNCTIONS)) gate.enqueue(stream);
    HAL_REQUIRE_OK(halMemsetAsync(block.get(), kBytes, 0x5a, kBytes, stream));
    HAL_REQUIRE_OK(halRecordEvent(filled, stream));

    cts::ipc::Child child("reader");
    REQUIRE(child.started());
    std::string error;
    REQUIRE(cts::ipc::send(child.toChild(), handles, &error));

    // The child has enqueued its wait for `filled` and a copy after it: only now may the fill
    // run (a wait that did not hold would have copied the zeros already).
    cts::ipc::Message reply;
    INFO(error);
    REQUIRE(cts::ipc::receive(child.fromChild(), &reply, 20s, &error));
    INFO("child: " << reply.what << " " << reply.text);
    REQUIRE(std::string(reply.what) == "enqueued");
    std::this_thread::sleep_for(50ms);
    gate.open();
    REQUIRE(cts::ipc::receive(child.fromChild(), &reply, 20s, &error));
    INFO("child: " << reply.what << " " << reply.text);
    REQUIRE(std::string(reply.what) == "recorded");

    // The child recorded `written` after a delayed overwrite of the first half.
    std::vector<unsigned char> seen(kBytes, 0);
    HAL_REQUIRE_OK(halStreamWaitEvent(stream, written));
    HAL_REQUIRE_OK(
        halMemcpyAsync(seen.data(), kBytes, block.get(), kBytes, HAL_MEMCPY_DEFAULT, stream));
    HAL_REQUIRE_OK(halSynchronizeStream(stream));
    HAL_CHECK_OK(halQueryEvent(written));
    size_t wrong = 0;
    for (size_t i = 0; i < kBytes; ++i) wrong += seen[i] != (i < kBytes / 2 ? 0xc3 : 0x5a);
    CHECK(wrong == 0);

    REQUIRE(cts::ipc::send(child.toChild(), cts::ipc::makeMessage("done"), &error));
    const int status = child.wait(20s, &error);
    INFO(error);
    CHECK(status == 0);
}

TEST_CASE("two processes share a block, ordered by the host", "[ipc][process]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_IPC_MEMORY);
    constexpr size_t kBytes = 1u << 20;
    cts::DeviceMemory block(kBytes);
    HAL_REQUIRE_OK(halMemset(block.get(), kBytes, 0x5a, kBytes));
    cts::ipc::Message handles = cts::ipc::makeMessage("handles", std::to_string(kBytes));
    halIpcMemHandle memory;
    HAL_REQUIRE_OK(halIpcGetMemHandle(&memory, block.get()));
    std::memcpy(handles.handles[0], memory.reserved, sizeof memory.reserved);

    cts::ipc::Child child("reader");
    REQUIRE(child.started());
    std::string error;
    REQUIRE(cts::ipc::send(child.toChild(), handles, &error));
    cts::ipc::Message reply;
    INFO(error);
    REQUIRE(cts::ipc::receive(child.fromChild(), &reply, 20s, &error));
    INFO("child: " << reply.what << " " << reply.text);
    REQUIRE(std::string(reply.what) == "recorded");
    std::vector<unsigned char> seen(kBytes, 0);
    HAL_REQUIRE_OK(halMemcpy(seen.data(), kBytes, block.get(), kBytes, HAL_MEMCPY_DEFAULT));
    size_t wrong = 0;
    for (size_t i = 0; i < kBytes; ++i) wrong += seen[i] != (i < kBytes / 2 ? 0xc3 : 0x5a);
    CHECK(wrong == 0);
    REQUIRE(cts::ipc::send(child.toChild(), cts::ipc::makeMessage("done"), &error));
    CHECK(child.wait(20s, &error) == 0);
}

TEST_CASE("a handle cannot be opened once its exporter released the memory or exited",
          "[ipc][process]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_IPC_MEMORY);
    cts::ipc::Child child("exporter");
    const cts::ipc::Message message = receiveHandles(child);
    std::string error;
    halIpcMemHandle kept, freed;
    std::memcpy(kept.reserved, message.handles[0], sizeof kept.reserved);
    std::memcpy(freed.reserved, message.handles[1], sizeof freed.reserved);
    // The CPU backend tells a released segment and an exited exporter (HAL_ERROR_NOT_FOUND); a
    // vendor driver (or its double) reports its own error for an exited exporter, and may not
    // know that the exporter freed an allocation.
    const bool cpu = cts::backendName() == "cpu";
    void* opened = nullptr;
    if (cpu) {
        CHECK(halIpcOpenMemHandle(&opened, freed, 0) == HAL_ERROR_NOT_FOUND);
        CHECK(std::string(halGetLastErrorMessage()).find("freed") != std::string::npos);
    }
    // The block the exporter still holds opens, and is closed again at once.
    HAL_REQUIRE_OK(halIpcOpenMemHandle(&opened, kept, 0));
    HAL_CHECK_OK(halIpcCloseMemHandle(opened));

    REQUIRE(cts::ipc::send(child.toChild(), cts::ipc::makeMessage("done"), &error));
    REQUIRE(child.wait(20s, &error) == 0);
    const halError gone = halIpcOpenMemHandle(&opened, kept, 0);
    CHECK(gone != HAL_SUCCESS);
    CHECK_FALSE(std::string(halGetLastErrorMessage()).empty());
    if (cpu) {
        CHECK(gone == HAL_ERROR_NOT_FOUND);
        CHECK(std::string(halGetLastErrorMessage()).find("exited") != std::string::npos);
    }
}

TEST_CASE("an event handle cannot be opened once its exporter destroyed the event",
          "[ipc][process][event]") {
    CTS_REQUIRE_CAPABILITY(HAL_DEVICE_CAP_IPC_EVENTS);
    cts::ipc::Child child("event-exporter");
    const cts::ipc::Message message = receiveHandles(child);
    std::string error;
    halIpcEventHandle kept, destroyed;
    std::memcpy(kept.reserved, message.handles[0], sizeof kept.reserved);
    std::memcpy(destroyed.reserved, message.handles[1], sizeof destroyed.reserved);
    // Backends that keep an interprocess event's records themselves tell a destroyed event
    // (HAL_ERROR_NOT_FOUND); a vendor driver (or its double) reports its own error.
    const bool ownRecords = cts::backendName() == "cpu" || cts::backendName() == "level_zero";
    halEvent opened = nullptr;
    const halError gone = halIpcOpenEventHandle(&opened, destroyed);
    CHECK(gone != HAL_SUCCESS);
    CHECK_FALSE(std::string(halGetLastErrorMessage()).empty());
    if (ownRecords) CHECK(gone == HAL_ERROR_NOT_FOUND);
    // The event the exporter still holds opens, never recorded, and is destroyed again at once.
    HAL_REQUIRE_OK(halIpcOpenEventHandle(&opened, kept));
    HAL_CHECK_OK(halQueryEvent(opened));
    HAL_CHECK_OK(halDestroyEvent(opened));

    REQUIRE(cts::ipc::send(child.toChild(), cts::ipc::makeMessage("done"), &error));
    REQUIRE(child.wait(20s, &error) == 0);  // it destroyed the other event before exiting
    const halError ended = halIpcOpenEventHandle(&opened, kept);
    CHECK(ended != HAL_SUCCESS);
    if (ownRecords) CHECK(ended == HAL_ERROR_NOT_FOUND);
}
