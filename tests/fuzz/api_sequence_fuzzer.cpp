// API-sequence fuzzer (libFuzzer). Input bytes are decoded into a sequence of public calls over
// small tables of streams, events, pool and host buffers and a module, on two CPU devices:
// creation and destruction, reuse of destroyed handles, bad sizes, copies and memsets whose
// contents are read back, host functions, failing kernels, resets and device switches. Where the
// result of a call is clear it is checked against a model; any mismatch, crash, sanitizer report
// or leak is a finding:
//   - a destroyed handle gives HAL_ERROR_INVALID_HANDLE;
//   - bytes written by ordered operations read back right;
//   - an asynchronous failure is reported exactly once (counted per input: failing kernels
//     launched against LAUNCH_FAILED reports and the later failures each report counts, when
//     no reset cleared any);
//   - every failure leaves a non-empty message.
#include <polyhal/hal.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef POLYHAL_FUZZ_KERNELS
#error "POLYHAL_FUZZ_KERNELS must name the CPU conformance kernels"
#endif

namespace {

[[noreturn]] void finding(const char* what, halError result) {
    std::fprintf(stderr, "finding: %s -> %s (%s)\n", what, halGetErrorName(result),
                 halGetLastErrorMessage());
    std::abort();
}

#define EXPECT(call, accepted)                                             \
    do {                                                                   \
        const halError result_ = (call);                                   \
        if (!(accepted)) finding(#call, result_);                          \
        if (result_ != HAL_SUCCESS && *halGetLastErrorMessage() == '\0') { \
            finding("empty message after " #call, result_);                \
        }                                                                  \
    } while (0)

// Reads the input a byte at a time; zeros once it is used up.
class Input {
  public:
    Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
    bool more() const { return offset_ < size_; }
    uint8_t byte() { return offset_ < size_ ? data_[offset_++] : 0; }
    uint32_t below(uint32_t n) { return byte() % n; }

  private:
    const uint8_t* data_;
    size_t size_;
    size_t offset_ = 0;
};

constexpr int kSlots = 4;

struct Buffer {
    void* pointer = nullptr;
    size_t size = 0;
    int device = 0;
    bool async = false;        // from halMallocAsync (freed with halFreeAsync)
    int stream = -1;           // the stream slot it was made on, for halMallocAsync
    uint8_t* model = nullptr;  // expected contents once the device is idle (modelStorage)
};

// The models' bytes, one vector per buffer slot, kept across inputs: buffers reach megabytes,
// and fresh host memory for each (faulted in, unmapped again) cost more than the rest of an
// input. Likewise the host side of read-backs.
std::vector<uint8_t> modelStorage[kSlots];
std::vector<uint8_t> readBack;

struct State {
    halStream streams[kSlots] = {};
    int streamDevice[kSlots] = {};
    halEvent events[kSlots] = {};
    int eventDevice[kSlots] = {};
    Buffer buffers[kSlots];
    halModule modules[2] = {};
    halFunction failing[2] = {};
    std::vector<halStream> deadStreams;
    std::vector<halEvent> deadEvents;
    int device = 0;
    int devices = 1;
    long launchedFailures = 0;
    long reportedFailures = 0;
    bool resetHappened = false;
};

// A result of a call that may report an asynchronous failure. One report stands for the
// failures it counts too ("... (and 2 later failure(s) on this stream)", hal.h).
bool counted(State& state, halError result) {
    if (result == HAL_ERROR_LAUNCH_FAILED) {
        ++state.reportedFailures;
        const char* folded = std::strstr(halGetLastErrorMessage(), "(and ");
        if (folded != nullptr) state.reportedFailures += std::strtol(folded + 5, nullptr, 10);
        return true;
    }
    return result == HAL_SUCCESS;
}

void hostFunction(void* counter) {
    ++*static_cast<int*>(counter);
}
int g_hostCalls = 0;

void setDevice(State& state, int device) {
    EXPECT(halSetDevice(device), result_ == HAL_SUCCESS);
    state.device = device;
}

halStream streamOf(State& state, Input& in) {
    const uint32_t pick = in.below(kSlots + 1);
    if (pick == kSlots) return nullptr;  // the default stream of the current device
    return state.streams[pick] != nullptr && state.streamDevice[pick] == state.device
               ? state.streams[pick]
               : nullptr;
}

void drain(State& state) {
    for (int device = 0; device < state.devices; ++device) {
        setDevice(state, device);
        for (int round = 0; round < 64; ++round) {
            bool clean = true;
            for (int i = 0; i < kSlots; ++i) {
                if (state.streams[i] == nullptr || state.streamDevice[i] != device) continue;
                const halError result = halSynchronizeStream(state.streams[i]);
                if (!counted(state, result)) finding("draining a stream", result);
                if (result != HAL_SUCCESS) clean = false;
            }
            const halError result = halSynchronizeDevice();
            if (!counted(state, result)) finding("draining the device", result);
            if (result != HAL_SUCCESS) clean = false;
            if (clean) break;
        }
    }
}

void freeBuffer(State& state, Buffer& buffer) {
    if (buffer.pointer == nullptr) return;
    setDevice(state, buffer.device);
    EXPECT(halFree(buffer.pointer), result_ == HAL_SUCCESS);
    buffer = Buffer{};
}

void checkContents(State& state, Buffer& buffer) {
    if (buffer.pointer == nullptr) return;
    if (readBack.size() < buffer.size) readBack.resize(buffer.size);
    std::memset(readBack.data(), 0, buffer.size);  // bytes the copy missed must not match
    EXPECT(halMemcpy(readBack.data(), buffer.size, buffer.pointer, buffer.size, HAL_MEMCPY_DEFAULT),
           result_ == HAL_SUCCESS);
    if (std::memcmp(readBack.data(), buffer.model, buffer.size) != 0) {
        finding("contents read back differ from the model", HAL_SUCCESS);
    }
    (void)state;
}

void step(State& state, Input& in) {
    const uint32_t op = in.below(20);
    const int slot = static_cast<int>(in.below(kSlots));
    switch (op) {
    case 0:  // create or destroy a stream
        if (state.streams[slot] == nullptr) {
            EXPECT(halCreateStream(&state.streams[slot]), result_ == HAL_SUCCESS);
            state.streamDevice[slot] = state.device;
        } else {
            EXPECT(halDestroyStream(state.streams[slot]), result_ == HAL_SUCCESS);
            state.deadStreams.push_back(state.streams[slot]);
            state.streams[slot] = nullptr;
        }
        break;
    case 1:  // create or destroy an event
        if (state.events[slot] == nullptr) {
            EXPECT(halCreateEventWithFlag(&state.events[slot], in.below(4)),
                   result_ == HAL_SUCCESS);
            state.eventDevice[slot] = state.device;
        } else {
            EXPECT(halDestroyEvent(state.events[slot]), result_ == HAL_SUCCESS);
            state.deadEvents.push_back(state.events[slot]);
            state.events[slot] = nullptr;
        }
        break;
    case 2: {  // record an event, make a stream wait for it
        halEvent event = state.events[slot];
        if (event == nullptr || state.eventDevice[slot] != state.device) break;
        halStream stream = streamOf(state, in);
        EXPECT(halRecordEvent(event, stream), result_ == HAL_SUCCESS);
        EXPECT(halStreamWaitEvent(streamOf(state, in), event), result_ == HAL_SUCCESS);
        break;
    }
    case 3: {  // query or synchronise an event
        if (state.events[slot] == nullptr) break;
        EXPECT(halQueryEvent(state.events[slot]),
               result_ == HAL_SUCCESS || result_ == HAL_ERROR_NOT_READY);
        EXPECT(halSynchronizeEvent(state.events[slot]), result_ == HAL_SUCCESS);
        break;
    }
    case 4: {  // allocate
        Buffer& buffer = state.buffers[slot];
        if (buffer.pointer != nullptr) break;
        const size_t size = 1 + in.byte() * 61u + in.below(2) * (in.byte() << 14);
        const bool async = in.below(2) == 1;
        const int streamSlot = static_cast<int>(in.below(kSlots));
        halStream stream =
            state.streams[streamSlot] != nullptr && state.streamDevice[streamSlot] == state.device
                ? state.streams[streamSlot]
                : nullptr;
        void* pointer = nullptr;
        if (async) {
            EXPECT(halMallocAsync(&pointer, size, stream), result_ == HAL_SUCCESS);
        } else {
            EXPECT(halMalloc(&pointer, size), result_ == HAL_SUCCESS);
        }
        const uint8_t fill = in.byte();
        EXPECT(halMemsetAsync(pointer, size, fill, size, async ? stream : nullptr),
               result_ == HAL_SUCCESS);
        if (async) EXPECT(halSynchronizeStream(stream), counted(state, result_));
        modelStorage[slot].assign(size, fill);
        buffer = Buffer{
            pointer, size, state.device, async, async ? streamSlot : -1, modelStorage[slot].data()};
        break;
    }
    case 5:  // free, in stream order or not
        if (state.buffers[slot].pointer != nullptr) {
            Buffer& buffer = state.buffers[slot];
            setDevice(state, buffer.device);
            if (in.below(2) == 0) {
                EXPECT(halFreeAsync(buffer.pointer, streamOf(state, in)), result_ == HAL_SUCCESS);
                buffer = Buffer{};
            } else {
                freeBuffer(state, buffer);
            }
        }
        break;
    case 6: {  // memset part of a buffer on the default stream, then check it all
        Buffer& buffer = state.buffers[slot];
        if (buffer.pointer == nullptr) break;
        setDevice(state, buffer.device);
        const size_t offset = in.byte() % buffer.size;
        const size_t count = in.byte() % (buffer.size - offset + 1);
        const uint8_t value = in.byte();
        EXPECT(halMemset(static_cast<uint8_t*>(buffer.pointer) + offset, buffer.size - offset,
                         value, count),
               result_ == HAL_SUCCESS);
        std::memset(buffer.model + offset, value, count);
        checkContents(state, buffer);
        break;
    }
    case 7: {  // copy one buffer into another (possibly across devices), check it
        Buffer& dst = state.buffers[slot];
        Buffer& src = state.buffers[in.below(kSlots)];
        if (dst.pointer == nullptr || src.pointer == nullptr || &dst == &src) break;
        const size_t count = (dst.size < src.size ? dst.size : src.size) >> in.below(3);
        EXPECT(halMemcpy(dst.pointer, dst.size, src.pointer, count, HAL_MEMCPY_DEFAULT),
               result_ == HAL_SUCCESS);
        std::memcpy(dst.model, src.model, count);
        checkContents(state, dst);
        break;
    }
    case 8:  // bad sizes: past the end, overflow, zero
        if (state.buffers[slot].pointer != nullptr) {
            Buffer& buffer = state.buffers[slot];
            EXPECT(halMemset(buffer.pointer, SIZE_MAX, 0, buffer.size + 1 + in.byte()),
                   result_ == HAL_ERROR_INVALID_VALUE);
            EXPECT(
                halMemcpy(buffer.pointer, SIZE_MAX, buffer.pointer, SIZE_MAX, HAL_MEMCPY_DEFAULT),
                result_ == HAL_ERROR_INVALID_VALUE);
            EXPECT(halFree(static_cast<uint8_t*>(buffer.pointer) + 1 + in.below(64)),
                   result_ == HAL_ERROR_INVALID_VALUE);
        } else {
            void* pointer = nullptr;
            EXPECT(halMalloc(&pointer, 0), result_ == HAL_ERROR_INVALID_VALUE);
            EXPECT(halMalloc(&pointer, SIZE_MAX - in.byte()), result_ == HAL_ERROR_OUT_OF_MEMORY);
        }
        break;
    case 9:  // destroyed handles stay invalid
        if (!state.deadStreams.empty()) {
            halStream dead = state.deadStreams[in.byte() % state.deadStreams.size()];
            EXPECT(halSynchronizeStream(dead), result_ == HAL_ERROR_INVALID_HANDLE);
            EXPECT(halDestroyStream(dead), result_ == HAL_ERROR_INVALID_HANDLE);
        }
        if (!state.deadEvents.empty()) {
            halEvent dead = state.deadEvents[in.byte() % state.deadEvents.size()];
            EXPECT(halQueryEvent(dead), result_ == HAL_ERROR_INVALID_HANDLE);
            EXPECT(halRecordEvent(dead, nullptr), result_ == HAL_ERROR_INVALID_HANDLE);
        }
        break;
    case 10:
        EXPECT(halLaunchHostFunc(streamOf(state, in), hostFunction, &g_hostCalls),
               result_ == HAL_SUCCESS);
        break;
    case 11: {  // a kernel that fails while running
        const int device = state.device;
        if (state.modules[device] == nullptr) {
            EXPECT(halModuleLoadFile(&state.modules[device], POLYHAL_FUZZ_KERNELS),
                   result_ == HAL_SUCCESS);
            EXPECT(halModuleGetFunction(&state.failing[device], state.modules[device],
                                        "fail_with_code"),
                   result_ == HAL_SUCCESS);
        }
        const halDim3 one = {1, 1, 1};
        EXPECT(halLaunchKernel(state.failing[device], one, one, 0, nullptr, 0, streamOf(state, in)),
               result_ == HAL_SUCCESS);
        ++state.launchedFailures;
        break;
    }
    case 12: {  // synchronise or query a stream: may report a failure
        halStream stream = streamOf(state, in);
        const halError result =
            in.below(2) == 0 ? halSynchronizeStream(stream) : halQueryStream(stream);
        if (!counted(state, result) && result != HAL_ERROR_NOT_READY) {
            finding("synchronising or querying a stream", result);
        }
        break;
    }
    case 13: {
        const halError result = halSynchronizeDevice();
        if (!counted(state, result)) finding("halSynchronizeDevice", result);
        break;
    }
    case 14:  // switch devices
        setDevice(state, static_cast<int>(in.below(state.devices)));
        break;
    case 15:  // unload a module (it waits for the device; never reports a failure)
        if (state.modules[state.device] != nullptr) {
            EXPECT(halModuleUnload(state.modules[state.device]), result_ == HAL_SUCCESS);
            state.modules[state.device] = nullptr;
            state.failing[state.device] = nullptr;
        }
        break;
    case 16: {  // reset the current device: everything on it goes
        if (in.below(4) != 0) break;
        const int device = state.device;
        const halError result = halResetDevice(device);
        if (!counted(state, result)) finding("halResetDevice", result);
        state.resetHappened = true;
        for (int i = 0; i < kSlots; ++i) {
            if (state.streams[i] != nullptr && state.streamDevice[i] == device) {
                state.deadStreams.push_back(state.streams[i]);
                state.streams[i] = nullptr;
            }
            if (state.events[i] != nullptr && state.eventDevice[i] == device) {
                state.deadEvents.push_back(state.events[i]);
                state.events[i] = nullptr;
            }
            if (state.buffers[i].pointer != nullptr && state.buffers[i].device == device) {
                state.buffers[i] = Buffer{};
            }
        }
        state.modules[device] = nullptr;
        state.failing[device] = nullptr;
        break;
    }
    case 17: {  // invalid enums
        uint8_t a = 0, b = 0;
        EXPECT(halMemcpy(&a, 1, &b, 1, static_cast<halMemcpyKind>(0xffffff00u | in.byte())),
               result_ == HAL_ERROR_INVALID_VALUE || result_ == HAL_SUCCESS);
        EXPECT(halMemPoolSetAttribute(state.device, static_cast<halMemPoolAttribute>(3 + in.byte()),
                                      0),
               result_ == HAL_ERROR_INVALID_VALUE);
        break;
    }
    case 18:
        EXPECT(halMemPoolTrim(state.device, in.below(2) == 0 ? 0 : 1u << 20),
               result_ == HAL_SUCCESS);
        break;
    case 19:  // read a buffer back after all its work is ordered
        if (state.buffers[slot].pointer != nullptr) {
            setDevice(state, state.buffers[slot].device);
            checkContents(state, state.buffers[slot]);
        }
        break;
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    setenv("POLYHAL_BACKEND", "cpu", 1);
    setenv("POLYHAL_CPU_DEVICES", "2", 1);
    setenv("POLYHAL_CPU_MEMORY", "268435456", 1);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    State state;
    EXPECT(halGetDeviceCount(&state.devices), result_ == HAL_SUCCESS);
    setDevice(state, 0);
    Input in(data, size);
    while (in.more()) step(state, in);

    // Leave nothing behind for the next input.
    drain(state);
    if (!state.resetHappened && state.reportedFailures != state.launchedFailures) {
        std::fprintf(stderr, "finding: %ld failing kernels launched, %ld failures reported\n",
                     state.launchedFailures, state.reportedFailures);
        std::abort();
    }
    for (Buffer& buffer : state.buffers) {
        if (buffer.pointer != nullptr) checkContents(state, buffer);
        freeBuffer(state, buffer);
    }
    for (int device = 0; device < state.devices; ++device) {
        if (state.modules[device] != nullptr) {
            EXPECT(halModuleUnload(state.modules[device]), result_ == HAL_SUCCESS);
        }
    }
    for (int i = 0; i < kSlots; ++i) {
        if (state.events[i] != nullptr) {
            EXPECT(halDestroyEvent(state.events[i]), result_ == HAL_SUCCESS);
        }
        if (state.streams[i] != nullptr) {
            EXPECT(halDestroyStream(state.streams[i]), result_ == HAL_SUCCESS);
            state.streams[i] = nullptr;
        }
    }
    drain(state);  // the default streams and the work of the destroyed streams
    // The next input starts from an empty pool, and this one's memory is back with the host:
    // with as many frees as mallocs, libFuzzer skips its costly leak check of the input.
    for (int device = 0; device < state.devices; ++device) {
        EXPECT(halMemPoolTrim(device, 0), result_ == HAL_SUCCESS);
    }
    return 0;
}
