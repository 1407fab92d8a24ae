// Calls every public polyhal function that reaches a device once, on device 0, calling
// `afterEach` after each: how the plugin tests check that no call leaves the calling thread's
// vendor state (current context, current device) changed. Catch2 test code.
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_EVERY_ENTRY_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_EVERY_ENTRY_HPP_

#include <polyhal/hal.h>

#include <catch2/catch.hpp>
#include <functional>
#include <string>

namespace polyhal::doubles {

// `kernelImage`: an image with the conformance kernel fail_with_code, or "" to leave modules out.
inline void callEveryEntry(const std::function<void(const char* call)>& afterEach,
                           const std::string& kernelImage) {
#define POLYHAL_CALL(call)                                                                     \
    do {                                                                                       \
        const halError result_ = (call);                                                       \
        INFO(#call << " -> " << halGetErrorName(result_) << ": " << halGetLastErrorMessage()); \
        REQUIRE(result_ == HAL_SUCCESS);                                                       \
        afterEach(#call);                                                                      \
    } while (0)
    POLYHAL_CALL(halSetDevice(0));
    halStream stream = nullptr;
    POLYHAL_CALL(halCreateStream(&stream));
    halEvent start = nullptr;
    halEvent end = nullptr;
    POLYHAL_CALL(halCreateEvent(&start));
    POLYHAL_CALL(halCreateEvent(&end));
    void* device = nullptr;
    void* host = nullptr;
    POLYHAL_CALL(halMalloc(&device, 1024));
    POLYHAL_CALL(halMallocHost(&host, 1024));
    POLYHAL_CALL(halRecordEvent(start, stream));
    POLYHAL_CALL(halMemsetAsync(device, 1024, 7, 1024, stream));
    halDeviceProperties props = {};
    props.size = sizeof props;
    POLYHAL_CALL(halGetDeviceProperties(0, &props));
    if ((props.capabilities & HAL_DEVICE_CAP_IPC_MEMORY) != 0) {
        halIpcMemHandle ipc;
        POLYHAL_CALL(halIpcGetMemHandle(&ipc, device));
    }
    POLYHAL_CALL(halMemcpyAsync(host, 1024, device, 1024, HAL_MEMCPY_DEFAULT, stream));
    POLYHAL_CALL(halMemcpy2DAsync(host, 64, device, 32, 16, 8, HAL_MEMCPY_DEFAULT, stream));
    POLYHAL_CALL(halRecordEvent(end, stream));
    POLYHAL_CALL(halStreamWaitEvent(stream, end));
    POLYHAL_CALL(halSynchronizeEvent(end));
    POLYHAL_CALL(halQueryEvent(end));
    float ms = 0;
    POLYHAL_CALL(halEventElapsedTime(&ms, start, end));
    // The stream still holds the wait on `end` until its worker reaches it: query once it is idle.
    POLYHAL_CALL(halSynchronizeStream(stream));
    POLYHAL_CALL(halQueryStream(stream));
    POLYHAL_CALL(halSynchronizeDevice());
    CHECK(static_cast<unsigned char*>(host)[1023] == 7);
    void* pooled = nullptr;
    POLYHAL_CALL(halMallocAsync(&pooled, 4096, stream));
    POLYHAL_CALL(halFreeAsync(pooled, stream));
    POLYHAL_CALL(halSynchronizeStream(stream));
    POLYHAL_CALL(halMemPoolTrim(0, 0));
    POLYHAL_CALL(halFree(device));
    POLYHAL_CALL(halFreeHost(host));
    POLYHAL_CALL(halDestroyEvent(start));
    POLYHAL_CALL(halDestroyEvent(end));
    POLYHAL_CALL(halDestroyStream(stream));
    if (!kernelImage.empty()) {
        halModule module = nullptr;
        halFunction function = nullptr;
        POLYHAL_CALL(halModuleLoadData(&module, kernelImage.data(), kernelImage.size()));
        POLYHAL_CALL(halModuleGetFunction(&function, module, "fail_with_code"));
        POLYHAL_CALL(halModuleUnload(module));
    }
#undef POLYHAL_CALL
}

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_EVERY_ENTRY_HPP_
