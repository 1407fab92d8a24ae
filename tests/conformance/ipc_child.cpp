// The child roles of the IPC tests (ipc.cpp), run in a polyhal-cts process of their own.
#include <polyhal/hal.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "ipc_process.hpp"

namespace cts::ipc {

namespace {

constexpr std::chrono::seconds kMessageTimeout{20};

// A failed step: its text goes to the parent, which reports it.
struct Failed {
    std::string text;
};

void require(halError status, const char* call) {
    if (status == HAL_SUCCESS) return;
    throw Failed{std::string(call) + " -> " + halGetErrorName(status) + ": " +
                 halGetLastErrorMessage()};
}

void expect(halError status, halError expected, const char* call) {
    if (status == expected) return;
    throw Failed{std::string(call) + " -> " + halGetErrorName(status) + ", expected " +
                 halGetErrorName(expected) + ": " + halGetLastErrorMessage()};
}

#define CHILD_REQUIRE(call) require((call), #call)
#define CHILD_EXPECT(call, expected) expect((call), (expected), #call)

void sleepFor(void* milliseconds) {
    std::this_thread::sleep_for(std::chrono::milliseconds(*static_cast<int*>(milliseconds)));
}

// Delays `stream`'s later work where host functions exist, so that a wait that did not hold
// would let the work after it run too early.
void delay(halStream stream) {
    static int milliseconds = 100;
    halDeviceProperties props;
    std::memset(&props, 0, sizeof props);
    props.size = sizeof props;
    CHILD_REQUIRE(halGetDeviceProperties(0, &props));
    if ((props.capabilities & HAL_DEVICE_CAP_HOST_FUNCTIONS) != 0) {
        CHILD_REQUIRE(halLaunchHostFunc(stream, sleepFor, &milliseconds));
    }
}

Message receiveOrThrow(int fd) {
    Message message;
    std::string error;
    if (!receive(fd, &message, kMessageTimeout, &error)) throw Failed{error};
    return message;
}

// Waits for the parent's word that this process may let go of what it shared.
void awaitDone(int in) {
    const Message done = receiveOrThrow(in);
    if (std::strcmp(done.what, "done") != 0) throw Failed{"expected 'done' from the parent"};
}

void sendOrThrow(int out, const Message& message) {
    std::string error;
    if (!send(out, message, &error)) throw Failed{error};
}

// Opens the block process A sent and checks A's fill, then overwrites the first half and says
// so. With events (the message's text says "<bytes> events"): waits for A's fill in stream order,
// and records the second event after a delayed overwrite. Without: A filled the block before
// sending it, and this process finishes its overwrite before answering.
void reader(int in, int out) {
    const Message handles = receiveOrThrow(in);
    halIpcMemHandle memoryHandle;
    halIpcEventHandle filledHandle, writtenHandle;
    std::memcpy(memoryHandle.reserved, handles.handles[0], sizeof memoryHandle.reserved);
    std::memcpy(filledHandle.reserved, handles.handles[1], sizeof filledHandle.reserved);
    std::memcpy(writtenHandle.reserved, handles.handles[2], sizeof writtenHandle.reserved);
    size_t bytes = 0;
    char ordering[16] = {};
    std::sscanf(handles.text, "%zu %15s", &bytes, ordering);
    void* shared = nullptr;
    CHILD_REQUIRE(halIpcOpenMemHandle(&shared, memoryHandle, 0));
    if (std::strcmp(ordering, "events") != 0) {
        std::vector<unsigned char> seen(bytes, 0);
        CHILD_REQUIRE(halMemcpy(seen.data(), seen.size(), shared, bytes, HAL_MEMCPY_DEFAULT));
        for (size_t i = 0; i < bytes; ++i) {
            if (seen[i] != 0x5a) throw Failed{"byte " + std::to_string(i) + " is not 0x5a"};
        }
        CHILD_REQUIRE(halMemset(shared, bytes, 0xc3, bytes / 2));
        sendOrThrow(out, makeMessage("recorded"));
        const Message done = receiveOrThrow(in);
        if (std::strcmp(done.what, "done") != 0) throw Failed{"expected 'done' from the parent"};
        CHILD_REQUIRE(halIpcCloseMemHandle(shared));
        return;
    }
    halEvent filled = nullptr, written = nullptr;
    CHILD_REQUIRE(halIpcOpenEventHandle(&filled, filledHandle));
    CHILD_REQUIRE(halIpcOpenEventHandle(&written, writtenHandle));
    float milliseconds = 0;  // opened events never time
    CHILD_EXPECT(halEventElapsedTime(&milliseconds, filled, written), HAL_ERROR_INVALID_VALUE);
    halStream stream = nullptr;
    CHILD_REQUIRE(halCreateStream(&stream));

    std::vector<unsigned char> seen(bytes, 0);
    CHILD_REQUIRE(halStreamWaitEvent(stream, filled));
    CHILD_REQUIRE(
        halMemcpyAsync(seen.data(), seen.size(), shared, bytes, HAL_MEMCPY_DEFAULT, stream));
    // The parent lets its fill run only now: a wait that did not hold would copy too early.
    sendOrThrow(out, makeMessage("enqueued"));
    CHILD_REQUIRE(halSynchronizeStream(stream));
    for (size_t i = 0; i < bytes; ++i) {
        if (seen[i] != 0x5a) {
            throw Failed{"byte " + std::to_string(i) + " of the shared block is " +
                         std::to_string(seen[i]) + ", not 0x5a: the wait did not hold"};
        }
    }
    delay(stream);
    CHILD_REQUIRE(halMemsetAsync(shared, bytes, 0xc3, bytes / 2, stream));
    CHILD_REQUIRE(halRecordEvent(written, stream));
    sendOrThrow(out, makeMessage("recorded"));

    // The parent has waited on `written`; only then may this process let go of the memory.
    awaitDone(in);
    CHILD_EXPECT(halFree(shared), HAL_ERROR_INVALID_VALUE);
    CHILD_REQUIRE(halIpcCloseMemHandle(shared));
    CHILD_EXPECT(halIpcCloseMemHandle(shared), HAL_ERROR_INVALID_VALUE);
    CHILD_REQUIRE(halDestroyEvent(filled));
    CHILD_REQUIRE(halDestroyEvent(written));
    CHILD_REQUIRE(halDestroyStream(stream));
}

// Exports two blocks and frees the second, which has a segment of its own, so that the pool
// releases it; sends both handles, and exits without freeing the first once the parent is done.
void exporter(int in, int out) {
    void* kept = nullptr;
    void* freed = nullptr;
    CHILD_REQUIRE(halMalloc(&kept, 4096));
    CHILD_REQUIRE(halMalloc(&freed, size_t{64} << 20));
    Message message = makeMessage("handles");
    halIpcMemHandle handle;
    CHILD_REQUIRE(halIpcGetMemHandle(&handle, kept));
    std::memcpy(message.handles[0], handle.reserved, sizeof handle.reserved);
    CHILD_REQUIRE(halIpcGetMemHandle(&handle, freed));
    std::memcpy(message.handles[1], handle.reserved, sizeof handle.reserved);
    CHILD_REQUIRE(halFree(freed));
    CHILD_REQUIRE(halSynchronizeDevice());
    int device = 0;
    CHILD_REQUIRE(halGetDevice(&device));
    CHILD_REQUIRE(halMemPoolTrim(device, 0));
    sendOrThrow(out, message);
    awaitDone(in);
}

// Exports two interprocess events and destroys the second; sends both handles, and destroys the
// first and exits once the parent is done.
void eventExporter(int in, int out) {
    halEvent kept = nullptr;
    halEvent destroyed = nullptr;
    const uint32_t flags = HAL_EVENT_INTERPROCESS | HAL_EVENT_DISABLE_TIMING;
    CHILD_REQUIRE(halCreateEventWithFlag(&kept, flags));
    CHILD_REQUIRE(halCreateEventWithFlag(&destroyed, flags));
    Message message = makeMessage("handles");
    halIpcEventHandle handle;
    CHILD_REQUIRE(halIpcGetEventHandle(&handle, kept));
    std::memcpy(message.handles[0], handle.reserved, sizeof handle.reserved);
    CHILD_REQUIRE(halIpcGetEventHandle(&handle, destroyed));
    std::memcpy(message.handles[1], handle.reserved, sizeof handle.reserved);
    CHILD_REQUIRE(halDestroyEvent(destroyed));
    sendOrThrow(out, message);
    awaitDone(in);
    CHILD_REQUIRE(halDestroyEvent(kept));
}

}  // namespace

int runChild(const char* assignment) {
    char role[32] = {};
    int in = -1, out = -1;
    if (std::sscanf(assignment, "%31[^:]:%d:%d", role, &in, &out) != 3) {
        std::fprintf(stderr, "polyhal-cts: malformed %s '%s'\n", kChildVariable, assignment);
        return 2;
    }
    try {
        if (std::strcmp(role, "reader") == 0) {
            reader(in, out);
        } else if (std::strcmp(role, "exporter") == 0) {
            exporter(in, out);
        } else if (std::strcmp(role, "event-exporter") == 0) {
            eventExporter(in, out);
        } else {
            throw Failed{std::string("unknown role '") + role + "'"};
        }
        return 0;
    } catch (const Failed& failure) {
        std::string ignored;
        send(out, makeMessage("failed", failure.text), &ignored);
        std::fprintf(stderr, "polyhal-cts child (%s): %s\n", role, failure.text.c_str());
        return 1;
    }
}

}  // namespace cts::ipc
