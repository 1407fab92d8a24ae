// The bad-input table: every public function of <polyhal/hal.h> with the bad arguments its
// documentation names (NULL, destroyed and foreign handles, absurd sizes, products that
// overflow, invalid enum values), each with the error hal.h promises. Every failure must leave
// a fresh, non-empty message. A second test reads hal.h and fails for any function without a
// row, so a new function cannot be added without its rows.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "kernels.hpp"

namespace {

// Objects the rows refer to: live ones, destroyed ones and foreign pointers.
struct Objects {
    halStream stream = nullptr;
    halStream destroyedStream = nullptr;
    halStream foreignStream = nullptr;
    halEvent event = nullptr;
    halEvent timingOff = nullptr;
    halEvent destroyedEvent = nullptr;
    halEvent foreignEvent = nullptr;
    halModule module = nullptr;  // NULL when the device runs no CTS kernels
    halModule unloadedModule = nullptr;
    halFunction function = nullptr;
    halFunction unloadedFunction = nullptr;
    void* device = nullptr;  // 256 bytes of pool memory
    void* host = nullptr;    // 256 bytes of halMallocHost memory
    unsigned char local[256] = {};
    int deviceCount = 0;
};

struct Row {
    const char* function;
    const char* bad;  // what is wrong with the arguments
    halError expected;
    std::function<halError(Objects&)> call;
    uint64_t needs = 0;  // halDeviceCapability bits the row needs (HAL_DEVICE_CAP_KERNELS: and
                         // the CTS kernels)
};

constexpr uint64_t kKernels = HAL_DEVICE_CAP_KERNELS;

// A call that returns a string instead of a halError: HAL_SUCCESS when `ok`.
halError stringCheck(bool ok) {
    return ok ? HAL_SUCCESS : HAL_ERROR_UNKNOWN;
}

template <typename Enum>
Enum invalidEnum() {
    return static_cast<Enum>(0xffffffffu);
}

constexpr halDim3 one = {1, 1, 1};

// A valid box of 2 slices of 2 rows of 16 bytes, rows 16 and slices 32 bytes apart: 64 bytes.
halMemcpy3DParams box3D(void* dst, const void* src) {
    halMemcpy3DParams params{};
    params.size = sizeof params;
    params.dst = dst;
    params.dstPitch = params.srcPitch = 16;
    params.dstSlicePitch = params.srcSlicePitch = 32;
    params.src = src;
    params.width = 16;
    params.height = 2;
    params.depth = 2;
    params.kind = HAL_MEMCPY_DEFAULT;
    return params;
}

// Valid arguments of fill_u32, so that only the row's own bad input is wrong.
const halKernelArg* fillArgs(Objects& o) {
    static const uint32_t value = 1, n = 1;
    static halKernelArg args[3];
    args[0] = {&o.device, sizeof o.device};
    args[1] = {&value, sizeof value};
    args[2] = {&n, sizeof n};
    return args;
}

std::vector<Row> rows() {
    return {
        {"halGetErrorName", "a value that is no halError", HAL_SUCCESS,
         [](Objects&) {
             return stringCheck(std::string(halGetErrorName(invalidEnum<halError>())) ==
                                "HAL_ERROR_UNRECOGNIZED");
         }},
        {"halGetErrorString", "a value that is no halError", HAL_SUCCESS,
         [](Objects&) { return stringCheck(*halGetErrorString(invalidEnum<halError>()) != 0); }},
        {"halGetLastErrorMessage", "none (never NULL)", HAL_SUCCESS,
         [](Objects&) { return stringCheck(halGetLastErrorMessage() != nullptr); }},
        {"halInit", "none (idempotent)", HAL_SUCCESS, [](Objects&) { return halInit(); }},
        {"halGetVersion", "every pointer NULL", HAL_SUCCESS,
         [](Objects&) { return halGetVersion(nullptr, nullptr, nullptr); }},
        {"halGetBackendName", "name NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halGetBackendName(nullptr); }},
        {"halGetDeviceCount", "count NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halGetDeviceCount(nullptr); }},
        {"halSetDevice", "-1", HAL_ERROR_INVALID_DEVICE, [](Objects&) { return halSetDevice(-1); }},
        {"halSetDevice", "the device count", HAL_ERROR_INVALID_DEVICE,
         [](Objects& o) { return halSetDevice(o.deviceCount); }},
        {"halSetDevice", "INT32_MIN", HAL_ERROR_INVALID_DEVICE,
         [](Objects&) { return halSetDevice(INT32_MIN); }},
        {"halGetDevice", "device NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halGetDevice(nullptr); }},
        {"halResetDevice", "-1", HAL_ERROR_INVALID_DEVICE,
         [](Objects&) { return halResetDevice(-1); }},
        {"halResetDevice", "the device count", HAL_ERROR_INVALID_DEVICE,
         [](Objects& o) { return halResetDevice(o.deviceCount); }},
        {"halGetDeviceProperties", "props NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halGetDeviceProperties(0, nullptr); }},
        {"halGetDeviceProperties", "props->size 0", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halDeviceProperties props = {};
             return halGetDeviceProperties(0, &props);
         }},
        {"halGetDeviceProperties", "device -1", HAL_ERROR_INVALID_DEVICE,
         [](Objects&) {
             halDeviceProperties props = {};
             props.size = sizeof props;
             return halGetDeviceProperties(-1, &props);
         }},
        {"halSynchronizeDevice", "none (idle device)", HAL_SUCCESS,
         [](Objects&) { return halSynchronizeDevice(); }},
        {"halGetMemInfo", "freeBytes NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             size_t total = 0;
             return halGetMemInfo(nullptr, &total);
         }},
        {"halGetMemInfo", "totalBytes NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             size_t free = 0;
             return halGetMemInfo(&free, nullptr);
         }},
        {"halDeviceCanAccessPeer", "canAccessPeer NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halDeviceCanAccessPeer(nullptr, 0, 0); }},
        {"halDeviceCanAccessPeer", "device past the last", HAL_ERROR_INVALID_DEVICE,
         [](Objects& o) {
             int can = 0;
             return halDeviceCanAccessPeer(&can, o.deviceCount, 0);
         }},
        {"halDeviceCanAccessPeer", "peerDevice -1", HAL_ERROR_INVALID_DEVICE,
         [](Objects&) {
             int can = 0;
             return halDeviceCanAccessPeer(&can, 0, -1);
         }},
        {"halDeviceEnablePeerAccess", "flags not 0", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halDeviceEnablePeerAccess(0, 1); }},
        {"halDeviceEnablePeerAccess", "peerDevice past the last", HAL_ERROR_INVALID_DEVICE,
         [](Objects& o) { return halDeviceEnablePeerAccess(o.deviceCount, 0); }},
        {"halDeviceEnablePeerAccess", "peerDevice the current device", HAL_ERROR_INVALID_DEVICE,
         [](Objects&) { return halDeviceEnablePeerAccess(0, 0); }},
        {"halDeviceDisablePeerAccess", "peerDevice -1", HAL_ERROR_INVALID_DEVICE,
         [](Objects&) { return halDeviceDisablePeerAccess(-1); }},
        {"halDeviceDisablePeerAccess", "access never enabled", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halDeviceDisablePeerAccess(0); }},
        {"halCreateStream", "stream NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halCreateStream(nullptr); }},
        {"halCreateStreamWithConfig", "stream NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halCreateStreamWithConfig(nullptr, 0, HAL_STREAM_DEFAULT); }},
        {"halCreateStreamWithConfig", "unknown flag bits", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halStream stream = nullptr;
             return halCreateStreamWithConfig(&stream, 0, 0x80000000u);
         }},
        {"halSetDefaultStreamMode", "invalid mode", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halSetDefaultStreamMode(invalidEnum<halDefaultStreamMode>()); }},
        {"halGetDefaultStreamMode", "mode NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halGetDefaultStreamMode(nullptr); }},
        {"halDestroyStream", "NULL (the default stream)", HAL_ERROR_INVALID_HANDLE,
         [](Objects&) { return halDestroyStream(nullptr); }},
        {"halDestroyStream", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halDestroyStream(o.destroyedStream); }},
        {"halDestroyStream", "a foreign pointer", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halDestroyStream(o.foreignStream); }},
        {"halSynchronizeStream", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halSynchronizeStream(o.destroyedStream); }},
        {"halSynchronizeStream", "a foreign pointer", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halSynchronizeStream(o.foreignStream); }},
        {"halQueryStream", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halQueryStream(o.destroyedStream); }},
        {"halQueryStream", "an event passed as a stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halQueryStream(reinterpret_cast<halStream>(o.event)); }},
        {"halStreamWaitEvent", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halStreamWaitEvent(o.destroyedStream, o.event); }},
        {"halStreamWaitEvent", "event NULL", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halStreamWaitEvent(o.stream, nullptr); }},
        {"halStreamWaitEvent", "a destroyed event", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halStreamWaitEvent(o.stream, o.destroyedEvent); }},
        {"halStreamWaitEvent", "a foreign event", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halStreamWaitEvent(o.stream, o.foreignEvent); }},
        {"halGetStreamPriorityRange", "both pointers NULL", HAL_SUCCESS,
         [](Objects&) { return halGetStreamPriorityRange(nullptr, nullptr); }},
        {"halStreamGetNativeHandle", "native NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halStreamGetNativeHandle(o.stream, nullptr); }},
        {"halStreamGetNativeHandle", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             void* native = nullptr;
             return halStreamGetNativeHandle(o.destroyedStream, &native);
         }},
        {"halCreateEvent", "event NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halCreateEvent(nullptr); }},
        {"halCreateEventWithFlag", "event NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halCreateEventWithFlag(nullptr, HAL_EVENT_DEFAULT); }},
        {"halCreateEventWithFlag", "HAL_EVENT_INTERPROCESS with timing", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halEvent event = nullptr;
             return halCreateEventWithFlag(&event, HAL_EVENT_INTERPROCESS);
         }},
        {"halCreateEventWithFlag", "unknown flag bits", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halEvent event = nullptr;
             return halCreateEventWithFlag(&event, 0x80000004u);
         }},
        {"halRecordEvent", "event NULL", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halRecordEvent(nullptr, o.stream); }},
        {"halRecordEvent", "a destroyed event", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halRecordEvent(o.destroyedEvent, o.stream); }},
        {"halRecordEvent", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halRecordEvent(o.event, o.destroyedStream); }},
        {"halQueryEvent", "NULL", HAL_ERROR_INVALID_HANDLE,
         [](Objects&) { return halQueryEvent(nullptr); }},
        {"halQueryEvent", "a destroyed event", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halQueryEvent(o.destroyedEvent); }},
        {"halQueryEvent", "a stream passed as an event", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halQueryEvent(reinterpret_cast<halEvent>(o.stream)); }},
        {"halSynchronizeEvent", "a destroyed event", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halSynchronizeEvent(o.destroyedEvent); }},
        {"halSynchronizeEvent", "a foreign pointer", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halSynchronizeEvent(o.foreignEvent); }},
        {"halEventElapsedTime", "ms NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halEventElapsedTime(nullptr, o.event, o.event); }},
        {"halEventElapsedTime", "start NULL", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             float ms = 0;
             return halEventElapsedTime(&ms, nullptr, o.event);
         }},
        {"halEventElapsedTime", "a destroyed end event", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             float ms = 0;
             return halEventElapsedTime(&ms, o.event, o.destroyedEvent);
         }},
        {"halEventElapsedTime", "an event with timing disabled", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             float ms = 0;
             return halEventElapsedTime(&ms, o.timingOff, o.event);
         },
         HAL_DEVICE_CAP_TIMING_EVENTS},
        {"halDestroyEvent", "NULL", HAL_ERROR_INVALID_HANDLE,
         [](Objects&) { return halDestroyEvent(nullptr); }},
        {"halDestroyEvent", "a destroyed event", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halDestroyEvent(o.destroyedEvent); }},
        {"halStreamBeginCapture", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             return halStreamBeginCapture(o.destroyedStream, HAL_CAPTURE_MODE_GLOBAL);
         }},
        {"halStreamBeginCapture", "an invalid mode", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halStreamBeginCapture(o.stream, invalidEnum<halCaptureMode>()); }},
        {"halStreamBeginCapture", "the default stream", HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED,
         [](Objects&) { return halStreamBeginCapture(nullptr, HAL_CAPTURE_MODE_RELAXED); }},
        {"halStreamEndCapture", "graph NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halStreamEndCapture(o.stream, nullptr); }},
        {"halStreamEndCapture", "a foreign stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             halGraph graph = nullptr;
             return halStreamEndCapture(o.foreignStream, &graph);
         }},
        {"halStreamEndCapture", "a stream not being captured", HAL_ERROR_STREAM_CAPTURE_UNMATCHED,
         [](Objects& o) {
             halGraph graph = nullptr;
             return halStreamEndCapture(o.stream, &graph);
         }},
        {"halStreamGetCaptureInfo", "status NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halStreamGetCaptureInfo(o.stream, nullptr); }},
        {"halStreamGetCaptureInfo", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             halCaptureStatus status;
             return halStreamGetCaptureInfo(o.destroyedStream, &status);
         }},
        {"halGraphLaunch", "graph NULL", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halGraphLaunch(nullptr, o.stream); }},
        {"halGraphLaunch", "a foreign graph", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halGraphLaunch(reinterpret_cast<halGraph>(o.local), o.stream); }},
        {"halGraphDestroy", "NULL", HAL_ERROR_INVALID_HANDLE,
         [](Objects&) { return halGraphDestroy(nullptr); }},
        {"halGraphDestroy", "a foreign graph", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halGraphDestroy(reinterpret_cast<halGraph>(o.local)); }},
        {"halLaunchHostFunc", "fn NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halLaunchHostFunc(o.stream, nullptr, nullptr); }},
        {"halLaunchHostFunc", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             return halLaunchHostFunc(
                 o.destroyedStream, [](void*) {}, nullptr);
         }},
        {"halMalloc", "ptr NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halMalloc(nullptr, 16); }},
        {"halMalloc", "size 0", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             void* p = nullptr;
             return halMalloc(&p, 0);
         }},
        {"halMalloc", "SIZE_MAX bytes", HAL_ERROR_OUT_OF_MEMORY,
         [](Objects&) {
             void* p = nullptr;
             return halMalloc(&p, SIZE_MAX);
         }},
        {"halFree", "host memory", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halFree(o.local); }},
        {"halFree", "an interior pointer", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halFree(static_cast<char*>(o.device) + 16); }},
        {"halFree", "pinned host memory", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halFree(o.host); }},
        {"halMallocHost", "ptr NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halMallocHost(nullptr, 16); }},
        {"halMallocHost", "size 0", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             void* p = nullptr;
             return halMallocHost(&p, 0);
         }},
        {"halMallocHost", "SIZE_MAX bytes", HAL_ERROR_OUT_OF_MEMORY,
         [](Objects&) {
             void* p = nullptr;
             return halMallocHost(&p, SIZE_MAX);
         }},
        {"halFreeHost", "memory not from halMallocHost", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halFreeHost(o.local); }},
        {"halFreeHost", "device memory", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halFreeHost(o.device); }},
        {"halHostRegister", "ptr NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halHostRegister(nullptr, 16, 0); }},
        {"halHostRegister", "size 0", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halHostRegister(o.local, 0, 0); }},
        {"halHostRegister", "flags not 0", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halHostRegister(o.local, 16, 1u); }},
        {"halHostRegister", "a range wrapping the address space", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halHostRegister(o.local, SIZE_MAX, 0); }},
        {"halHostRegister", "halMallocHost memory", HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
         [](Objects& o) { return halHostRegister(o.host, 16, 0); }, HAL_DEVICE_CAP_HOST_REGISTER},
        {"halHostRegister", "device memory", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halHostRegister(o.device, 16, 0); }, HAL_DEVICE_CAP_HOST_REGISTER},
        {"halHostUnregister", "memory never registered", HAL_ERROR_HOST_MEMORY_NOT_REGISTERED,
         [](Objects& o) { return halHostUnregister(o.local); }},
        {"halHostUnregister", "NULL", HAL_ERROR_HOST_MEMORY_NOT_REGISTERED,
         [](Objects&) { return halHostUnregister(nullptr); }},
        {"halMallocManaged", "ptr NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halMallocManaged(nullptr, 16, 0); }},
        {"halMallocManaged", "size 0", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             void* p = nullptr;
             return halMallocManaged(&p, 0, 0);
         }},
        {"halMallocManaged", "flags not 0", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             void* p = nullptr;
             return halMallocManaged(&p, 16, 2u);
         }},
        {"halMemcpy", "dst NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halMemcpy(nullptr, 16, o.local, 16, HAL_MEMCPY_DEFAULT); }},
        {"halMemcpy", "count > dstMax", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halMemcpy(o.local, 8, o.local + 128, 16, HAL_MEMCPY_DEFAULT); }},
        {"halMemcpy", "an invalid kind", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             return halMemcpy(o.local, 16, o.local + 128, 16, invalidEnum<halMemcpyKind>());
         }},
        {"halMemcpy", "a kind contradicting the device source", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halMemcpy(o.local, 16, o.device, 16, HAL_MEMCPY_HOST_TO_HOST); }},
        {"halMemcpy", "count past the end of the allocation", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halMemcpy(o.local, 256, o.device, 257, HAL_MEMCPY_DEFAULT); }},
        {"halMemcpy", "source and destination overlapping in one allocation",
         HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             return halMemcpy(static_cast<char*>(o.device) + 8, 248, o.device, 16,
                              HAL_MEMCPY_DEVICE_TO_DEVICE);
         }},
        {"halMemcpy", "SIZE_MAX bytes from an interior pointer", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             return halMemcpy(static_cast<char*>(o.device) + 8, SIZE_MAX, o.local, SIZE_MAX,
                              HAL_MEMCPY_DEFAULT);
         }},
        {"halMemcpyAsync", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             return halMemcpyAsync(o.local, 16, o.local + 128, 16, HAL_MEMCPY_DEFAULT,
                                   o.destroyedStream);
         }},
        {"halMemcpyAsync", "an invalid kind", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             return halMemcpyAsync(o.local, 16, o.local + 128, 16, invalidEnum<halMemcpyKind>(),
                                   o.stream);
         }},
        {"halMemcpyAsync", "src NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             return halMemcpyAsync(o.device, 16, nullptr, 16, HAL_MEMCPY_DEFAULT, o.stream);
         }},
        {"halMemcpy2D", "width larger than dpitch", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             return halMemcpy2D(o.device, 8, o.local, 16, 16, 2, HAL_MEMCPY_DEFAULT);
         }},
        {"halMemcpy2D", "rows spanning more than the address space", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             return halMemcpy2D(o.device, SIZE_MAX / 2, o.local, 16, 16, 4, HAL_MEMCPY_DEFAULT);
         }},
        {"halMemcpy2D", "rows past the end of the device block", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             return halMemcpy2D(o.device, 256, o.local, 16, 16, 3, HAL_MEMCPY_DEFAULT);
         }},
        {"halMemcpy2D", "an invalid kind", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             return halMemcpy2D(o.local, 16, o.local + 128, 16, 16, 2,
                                invalidEnum<halMemcpyKind>());
         }},
        {"halMemcpy2DAsync", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             return halMemcpy2DAsync(o.local, 16, o.local + 128, 16, 16, 2, HAL_MEMCPY_DEFAULT,
                                     o.destroyedStream);
         }},
        {"halMemcpy2DAsync", "src NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             return halMemcpy2DAsync(o.device, 16, nullptr, 16, 16, 2, HAL_MEMCPY_DEFAULT,
                                     o.stream);
         }},
        {"halMemcpy3D", "params NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halMemcpy3D(nullptr); }},
        {"halMemcpy3D", "params->size too small", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             halMemcpy3DParams params = box3D(o.device, o.local);
             params.size = sizeof(size_t);
             return halMemcpy3D(&params);
         }},
        {"halMemcpy3D", "slice pitch smaller than a slice's rows", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             halMemcpy3DParams params = box3D(o.device, o.local);
             params.dstSlicePitch = 24;
             return halMemcpy3D(&params);
         }},
        {"halMemcpy3D", "slices spanning more than the address space", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             halMemcpy3DParams params = box3D(o.device, o.local);
             params.dstSlicePitch = SIZE_MAX / 2;
             params.depth = 4;
             return halMemcpy3D(&params);
         }},
        {"halMemcpy3D", "slices past the end of the device block", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             halMemcpy3DParams params = box3D(o.device, o.local);
             params.dstSlicePitch = 256;
             return halMemcpy3D(&params);
         }},
        {"halMemcpy3D", "an invalid kind", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             halMemcpy3DParams params = box3D(o.local, o.local + 128);
             params.kind = invalidEnum<halMemcpyKind>();
             return halMemcpy3D(&params);
         }},
        {"halMemcpy3DAsync", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             const halMemcpy3DParams params = box3D(o.local, o.local + 128);
             return halMemcpy3DAsync(&params, o.destroyedStream);
         }},
        {"halMemcpy3DAsync", "src NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             const halMemcpy3DParams params = box3D(o.device, nullptr);
             return halMemcpy3DAsync(&params, o.stream);
         }},
        {"halMemcpy3DAsync", "params NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halMemcpy3DAsync(nullptr, o.stream); }},
        {"halMemset", "dst NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halMemset(nullptr, 16, 0, 16); }},
        {"halMemset", "count > dstMax", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halMemset(o.device, 8, 0, 16); }},
        {"halMemset", "count past the end of the allocation", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halMemset(o.device, SIZE_MAX, 0, 257); }},
        {"halMemsetAsync", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halMemsetAsync(o.device, 16, 0, 16, o.destroyedStream); }},
        {"halMemsetAsync", "count past the end of the allocation", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halMemsetAsync(o.device, SIZE_MAX, 0, SIZE_MAX, o.stream); }},
        {"halMallocAsync", "ptr NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halMallocAsync(nullptr, 16, o.stream); }},
        {"halMallocAsync", "size 0", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             void* p = nullptr;
             return halMallocAsync(&p, 0, o.stream);
         }},
        {"halMallocAsync", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             void* p = nullptr;
             return halMallocAsync(&p, 16, o.destroyedStream);
         }},
        {"halMallocAsync", "SIZE_MAX bytes", HAL_ERROR_OUT_OF_MEMORY,
         [](Objects& o) {
             void* p = nullptr;
             return halMallocAsync(&p, SIZE_MAX, o.stream);
         }},
        {"halFreeAsync", "ptr NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halFreeAsync(nullptr, o.stream); }},
        {"halFreeAsync", "host memory", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halFreeAsync(o.local, o.stream); }},
        {"halFreeAsync", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halFreeAsync(o.device, o.destroyedStream); }},
        {"halRecordStream", "ptr NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halRecordStream(nullptr, o.stream); }},
        {"halRecordStream", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halRecordStream(o.device, o.destroyedStream); }},
        {"halMemPoolGetStats", "stats NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halMemPoolGetStats(0, nullptr); }},
        {"halMemPoolGetStats", "stats->size 0", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halMemPoolStats stats = {};
             return halMemPoolGetStats(0, &stats);
         }},
        {"halMemPoolGetStats", "device -1", HAL_ERROR_INVALID_DEVICE,
         [](Objects&) {
             halMemPoolStats stats = {};
             stats.size = sizeof stats;
             return halMemPoolGetStats(-1, &stats);
         }},
        {"halMemPoolTrim", "device -1", HAL_ERROR_INVALID_DEVICE,
         [](Objects&) { return halMemPoolTrim(-1, 0); }},
        {"halMemPoolSetAttribute", "an invalid attribute", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halMemPoolSetAttribute(0, invalidEnum<halMemPoolAttribute>(), 0); }},
        {"halMemPoolSetAttribute", "a switch set to 2", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             return halMemPoolSetAttribute(0, HAL_MEMPOOL_ATTR_REUSE_PROVEN_ORDER, 2);
         }},
        {"halMemPoolSetAttribute", "the device count", HAL_ERROR_INVALID_DEVICE,
         [](Objects& o) {
             return halMemPoolSetAttribute(o.deviceCount, HAL_MEMPOOL_ATTR_RELEASE_THRESHOLD, 0);
         }},
        {"halMemPoolGetAttribute", "value NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             return halMemPoolGetAttribute(0, HAL_MEMPOOL_ATTR_RELEASE_THRESHOLD, nullptr);
         }},
        {"halMemPoolGetAttribute", "an invalid attribute", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             uint64_t value = 0;
             return halMemPoolGetAttribute(0, invalidEnum<halMemPoolAttribute>(), &value);
         }},
        {"halIpcGetMemHandle", "handle NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halIpcGetMemHandle(nullptr, o.device); }},
        {"halIpcGetMemHandle", "host memory", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             halIpcMemHandle handle;
             return halIpcGetMemHandle(&handle, o.local);
         }},
        {"halIpcGetMemHandle", "an interior pointer", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             halIpcMemHandle handle;
             return halIpcGetMemHandle(&handle, static_cast<unsigned char*>(o.device) + 1);
         }},
        {"halIpcOpenMemHandle", "devPtr NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halIpcMemHandle handle = {};
             return halIpcOpenMemHandle(nullptr, handle, 0);
         }},
        {"halIpcOpenMemHandle", "flags not 0", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halIpcMemHandle handle = {};
             void* ptr = nullptr;
             return halIpcOpenMemHandle(&ptr, handle, 1);
         }},
        {"halIpcOpenMemHandle", "zero bytes (not a handle)", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halIpcMemHandle handle = {};
             void* ptr = nullptr;
             return halIpcOpenMemHandle(&ptr, handle, 0);
         }},
        {"halIpcOpenMemHandle", "random bytes (not a handle)", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halIpcMemHandle handle;
             for (size_t i = 0; i < sizeof handle.reserved; ++i) {
                 handle.reserved[i] = static_cast<unsigned char>(i * 37 + 11);
             }
             void* ptr = nullptr;
             return halIpcOpenMemHandle(&ptr, handle, 0);
         }},
        {"halIpcOpenMemHandle", "a handle this process exported", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             halIpcMemHandle handle;
             if (halError e = halIpcGetMemHandle(&handle, o.device)) return e;
             void* ptr = nullptr;
             return halIpcOpenMemHandle(&ptr, handle, 0);
         },
         HAL_DEVICE_CAP_IPC_MEMORY},
        {"halIpcCloseMemHandle", "NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halIpcCloseMemHandle(nullptr); }},
        {"halIpcCloseMemHandle", "pool memory (not opened)", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halIpcCloseMemHandle(o.device); }},
        {"halIpcGetEventHandle", "handle NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halIpcGetEventHandle(nullptr, o.event); }},
        {"halIpcGetEventHandle", "event NULL", HAL_ERROR_INVALID_HANDLE,
         [](Objects&) {
             halIpcEventHandle handle;
             return halIpcGetEventHandle(&handle, nullptr);
         }},
        {"halIpcGetEventHandle", "a destroyed event", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             halIpcEventHandle handle;
             return halIpcGetEventHandle(&handle, o.destroyedEvent);
         }},
        {"halIpcGetEventHandle", "an event without HAL_EVENT_INTERPROCESS", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             halIpcEventHandle handle;
             return halIpcGetEventHandle(&handle, o.timingOff);
         }},
        {"halIpcOpenEventHandle", "event NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halIpcEventHandle handle = {};
             return halIpcOpenEventHandle(nullptr, handle);
         }},
        {"halIpcOpenEventHandle", "zero bytes (not a handle)", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halIpcEventHandle handle = {};
             halEvent event = nullptr;
             return halIpcOpenEventHandle(&event, handle);
         }},
        {"halIpcOpenEventHandle", "a memory handle", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             halIpcMemHandle memory;
             if (halError e = halIpcGetMemHandle(&memory, o.device)) return e;
             halIpcEventHandle handle;
             static_assert(sizeof handle == sizeof memory, "same size");
             std::memcpy(&handle, &memory, sizeof handle);
             halEvent event = nullptr;
             return halIpcOpenEventHandle(&event, handle);
         },
         HAL_DEVICE_CAP_IPC_MEMORY},
        {"halModuleLoadData", "module NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halModuleLoadData(nullptr, o.local, 16); }},
        {"halModuleLoadData", "image NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halModule m = nullptr;
             return halModuleLoadData(&m, nullptr, 16);
         }},
        {"halModuleLoadData", "size 0", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             halModule m = nullptr;
             return halModuleLoadData(&m, o.local, 0);
         }},
        {"halModuleLoadData", "zero bytes of image", HAL_ERROR_INVALID_IMAGE,
         [](Objects& o) {
             halModule m = nullptr;
             return halModuleLoadData(&m, o.local, sizeof o.local);
         },
         kKernels},
        {"halModuleLoadFile", "path NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halModule m = nullptr;
             return halModuleLoadFile(&m, nullptr);
         }},
        {"halModuleLoadFile", "a missing file", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halModule m = nullptr;
             return halModuleLoadFile(&m, "/nonexistent/polyhal/module");
         }},
        {"halModuleLoadFile", "a directory", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halModule m = nullptr;
             return halModuleLoadFile(&m, "/");
         }},
        {"halModuleLoadFile", "an empty file", HAL_ERROR_INVALID_VALUE,
         [](Objects&) {
             halModule m = nullptr;
             return halModuleLoadFile(&m, "/dev/null");
         }},
        {"halModuleGetFunction", "function NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halModuleGetFunction(nullptr, o.module, "fill_u32"); }, kKernels},
        {"halModuleGetFunction", "name NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             halFunction f = nullptr;
             return halModuleGetFunction(&f, o.module, nullptr);
         },
         kKernels},
        {"halModuleGetFunction", "an unloaded module", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             halFunction f = nullptr;
             return halModuleGetFunction(&f, o.unloadedModule, "fill_u32");
         },
         kKernels},
        {"halModuleGetFunction", "an unknown name", HAL_ERROR_NOT_FOUND,
         [](Objects& o) {
             halFunction f = nullptr;
             return halModuleGetFunction(&f, o.module, "no_such_kernel_in_the_cts");
         },
         kKernels},
        {"halModuleUnload", "NULL", HAL_ERROR_INVALID_HANDLE,
         [](Objects&) { return halModuleUnload(nullptr); }},
        {"halModuleUnload", "an unloaded module", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) { return halModuleUnload(o.unloadedModule); }, kKernels},
        {"halLaunchKernel", "function NULL", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             return halLaunchKernel(nullptr, one, one, 0, fillArgs(o), 3, o.stream);
         }},
        {"halLaunchKernel", "a function of an unloaded module", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             return halLaunchKernel(o.unloadedFunction, one, one, 0, fillArgs(o), 3, o.stream);
         },
         kKernels},
        {"halLaunchKernel", "a destroyed stream", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             return halLaunchKernel(o.function, one, one, 0, fillArgs(o), 3, o.destroyedStream);
         },
         kKernels},
        {"halLaunchKernel", "a zero grid dimension", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             return halLaunchKernel(o.function, {1, 0, 1}, one, 0, fillArgs(o), 3, o.stream);
         },
         kKernels},
        {"halLaunchKernel", "a block whose thread count wraps to 0", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             return halLaunchKernel(o.function, one, {0x80000000u, 0x80000000u, 4}, 0, fillArgs(o),
                                    3, o.stream);
         },
         kKernels},
        {"halLaunchKernel", "SIZE_MAX bytes of shared memory", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             return halLaunchKernel(o.function, one, one, SIZE_MAX, fillArgs(o), 3, o.stream);
         },
         kKernels},
        {"halLaunchKernel", "args NULL with numArgs 3", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) { return halLaunchKernel(o.function, one, one, 0, nullptr, 3, o.stream); },
         kKernels},
        {"halLaunchKernel", "an argument of SIZE_MAX bytes", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             const halKernelArg args[] = {{o.local, SIZE_MAX}};
             return halLaunchKernel(o.function, one, one, 0, args, 1, o.stream);
         },
         kKernels},
        {"halLaunchKernel", "an argument of size 0", HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             const halKernelArg args[] = {{o.local, 0}};
             return halLaunchKernel(o.function, one, one, 0, args, 1, o.stream);
         },
         kKernels},
        {"halLaunchKernelWithAccess", "function NULL", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             return halLaunchKernelWithAccess(nullptr, one, one, 0, fillArgs(o), nullptr, 3,
                                              o.stream);
         }},
        // Handles are validated before values, as in every other call.
        {"halLaunchKernelWithAccess",
         "function NULL and an access value outside halKernelArgAccess", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             halKernelArgAccess access[3];
             const uint32_t outside = 7;
             std::memcpy(&access[0], &outside, sizeof outside);
             access[1] = access[2] = HAL_KERNEL_ARG_NO_ACCESS;
             return halLaunchKernelWithAccess(nullptr, one, one, 0, fillArgs(o), access, 3,
                                              o.stream);
         }},
        {"halLaunchKernelWithAccess", "an access value outside halKernelArgAccess",
         HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             halKernelArgAccess access[3];
             const uint32_t outside = 7;
             std::memcpy(&access[0], &outside, sizeof outside);
             access[1] = access[2] = HAL_KERNEL_ARG_NO_ACCESS;
             return halLaunchKernelWithAccess(o.function, one, one, 0, fillArgs(o), access, 3,
                                              o.stream);
         },
         kKernels},
        {"halLaunchKernelWithUses", "function NULL", HAL_ERROR_INVALID_HANDLE,
         [](Objects& o) {
             return halLaunchKernelWithUses(nullptr, one, one, 0, fillArgs(o), nullptr, 3,
                                            o.stream);
         }},
        {"halLaunchKernelWithUses", "an access value outside halKernelArgAccess",
         HAL_ERROR_INVALID_VALUE,
         [](Objects& o) {
             halKernelArgUse uses[3] = {};
             const uint32_t outside = 7;
             std::memcpy(&uses[1].access, &outside, sizeof outside);
             uses[0].access = uses[2].access = HAL_KERNEL_ARG_NO_ACCESS;
             return halLaunchKernelWithUses(o.function, one, one, 0, fillArgs(o), uses, 3,
                                            o.stream);
         },
         kKernels},
        {"halCheckGetEnabled", "checks NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halCheckGetEnabled(nullptr); }},
        {"halCheckGetFindingCount", "count NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halCheckGetFindingCount(nullptr); }},
        // Any text is a site and NULL clears it: that the reports quote it, and stop once it is
        // cleared, is tested by the check corpus (call_site_cleared).
        {"halCheckSetCallSite", "none (any text, or NULL)", HAL_SUCCESS,
         [](Objects&) { return halCheckSetCallSite(nullptr); }},
        {"halTraceStart", "path NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halTraceStart(nullptr); }},
        {"halTraceStart", "an empty path", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halTraceStart(""); }},
        {"halTraceStart", "a path in a folder that does not exist", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halTraceStart("/nonexistent-folder/trace.json"); }},
        {"halTraceStop", "no trace being written", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halTraceStop(); }},
        {"halTraceRangePush", "name NULL", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halTraceRangePush(nullptr); }},
        {"halTraceRangePop", "no range open", HAL_ERROR_INVALID_VALUE,
         [](Objects&) { return halTraceRangePop(); }},
    };
}

// The names of the functions <polyhal/hal.h> declares, read from the header in the source tree.
std::set<std::string> declaredFunctions() {
    std::ifstream file(POLYHAL_CTS_HAL_HEADER);
    const std::string header((std::istreambuf_iterator<char>(file)), {});
    std::set<std::string> names;
    const std::regex declaration(R"(HAL_API\s+[\w\s\*]*?\b(hal\w+)\s*\()");
    for (auto it = std::sregex_iterator(header.begin(), header.end(), declaration);
         it != std::sregex_iterator(); ++it) {
        names.insert((*it)[1]);
    }
    return names;
}

}  // namespace

TEST_CASE("every public function refuses its documented bad inputs, with a fresh message",
          "[errors][bad_input]") {
    Objects o;
    HAL_REQUIRE_OK(halGetDeviceCount(&o.deviceCount));
    HAL_REQUIRE_OK(halCreateStream(&o.stream));
    HAL_REQUIRE_OK(halCreateStream(&o.destroyedStream));
    HAL_REQUIRE_OK(halDestroyStream(o.destroyedStream));
    HAL_REQUIRE_OK(halCreateEvent(&o.event));
    HAL_REQUIRE_OK(halRecordEvent(o.event, o.stream));
    HAL_REQUIRE_OK(halCreateEventWithFlag(&o.timingOff, HAL_EVENT_DISABLE_TIMING));
    HAL_REQUIRE_OK(halRecordEvent(o.timingOff, o.stream));
    HAL_REQUIRE_OK(halCreateEvent(&o.destroyedEvent));
    HAL_REQUIRE_OK(halDestroyEvent(o.destroyedEvent));
    o.foreignStream = reinterpret_cast<halStream>(o.local + 64);
    o.foreignEvent = reinterpret_cast<halEvent>(o.local + 64);
    HAL_REQUIRE_OK(halMalloc(&o.device, 256));
    HAL_REQUIRE_OK(halMallocHost(&o.host, 256));
    cts::Module module;
    cts::Module unloaded;
    const bool kernels = cts::loadKernel("fill_u32", module, &o.function) &&
                         cts::loadKernel("fill_u32", unloaded, &o.unloadedFunction);
    if (kernels) {
        o.module = module.get();
        o.unloadedModule = unloaded.release();
        HAL_REQUIRE_OK(halModuleUnload(o.unloadedModule));
    }
    HAL_REQUIRE_OK(halSynchronizeDevice());

    int tried = 0;
    for (const Row& row : rows()) {
        const uint64_t capabilities = cts::deviceProperties().capabilities;
        if ((row.needs & capabilities) != row.needs || ((row.needs & kKernels) != 0 && !kernels)) {
            continue;
        }
        INFO(row.function << " with " << row.bad);
        // A failure of its own first, so that the row's message is seen to be fresh.
        REQUIRE(halSetDevice(-424242) == HAL_ERROR_INVALID_DEVICE);
        const std::string before = halGetLastErrorMessage();
        const halError result = row.call(o);
        const std::string message = halGetLastErrorMessage();
        INFO("message: " << message);
        CHECK(result == row.expected);
        if (row.expected != HAL_SUCCESS) {
            CHECK(!message.empty());
            CHECK(message != before);
        }
        ++tried;
    }
    std::printf("bad-input table: %d rows tried\n", tried);
    HAL_CHECK_OK(halSynchronizeDevice());
    HAL_CHECK_OK(halFreeHost(o.host));
    HAL_CHECK_OK(halFree(o.device));
    HAL_CHECK_OK(halDestroyEvent(o.timingOff));
    HAL_CHECK_OK(halDestroyEvent(o.event));
    HAL_CHECK_OK(halDestroyStream(o.stream));
}

TEST_CASE("every function hal.h declares has rows in the bad-input table", "[errors][bad_input]") {
    const std::set<std::string> declared = declaredFunctions();
    REQUIRE(declared.size() >= 40);
    std::set<std::string> covered;
    for (const Row& row : rows()) covered.insert(row.function);
    for (const std::string& name : declared) {
        INFO(name << " is declared in hal.h; add its rows to this table");
        CHECK(covered.count(name) == 1);
    }
    for (const std::string& name : covered) {
        INFO(name << " has rows but is not declared in hal.h");
        CHECK(declared.count(name) == 1);
    }
}
