// The dispatch-table entries of the CPU backend, one group per source file. plugin.cpp puts
// them into the table; plugin.h documents what each must do.
#ifndef POLYHAL_CPU_ENTRIES_H_
#define POLYHAL_CPU_ENTRIES_H_

#include <polyhal/plugin.h>

namespace polyhal::cpu {

// platform.cpp
halError initialize() noexcept;
halError deviceGetCount(int* count) noexcept;

// device.cpp
halError deviceOpen(int ordinal, halPluginDevice* device) noexcept;
void deviceClose(halPluginDevice device) noexcept;
halError deviceGetInfo(halPluginDevice device, halPluginDeviceInfo* info) noexcept;
halError deviceSynchronize(halPluginDevice device) noexcept;

// stream.cpp
halError streamCreate(halPluginDevice device, int priority, uint32_t flags,
                      halPluginStream* stream) noexcept;
halError streamDestroy(halPluginStream stream) noexcept;
halError streamSynchronize(halPluginStream stream) noexcept;
halError streamQuery(halPluginStream stream) noexcept;
halError streamWaitEvent(halPluginStream stream, halPluginEvent event) noexcept;
halError launchHostFunc(halPluginStream stream, halHostFn fn, void* userData) noexcept;
halError streamGetNativeHandle(halPluginStream stream, void** native) noexcept;

// event.cpp
halError eventCreate(halPluginDevice device, uint32_t flags, halPluginEvent* event) noexcept;
halError eventDestroy(halPluginEvent event) noexcept;
halError eventRecord(halPluginEvent event, halPluginStream stream) noexcept;
halError eventQuery(halPluginEvent event) noexcept;
halError eventSynchronize(halPluginEvent event) noexcept;
halError eventElapsedTime(float* ms, halPluginEvent start, halPluginEvent end) noexcept;
halError ipcEventGetHandle(halPluginEvent event, halPluginIpcHandle* handle) noexcept;
halError ipcEventOpenHandle(halPluginDevice device, const halPluginIpcHandle* handle,
                            halPluginEvent* event) noexcept;

// memory.cpp
halError memAllocDevice(halPluginDevice device, size_t size, void** ptr) noexcept;
halError memFreeDevice(halPluginDevice device, void* ptr) noexcept;
halError memAllocHost(halPluginDevice device, size_t size, void** ptr) noexcept;
halError memFreeHost(halPluginDevice device, void* ptr) noexcept;
halError memGetInfo(halPluginDevice device, size_t* freeBytes, size_t* totalBytes) noexcept;
halError memcpyAsync(halPluginStream stream, void* dst, const void* src, size_t count,
                     halMemcpyKind kind) noexcept;
halError memcpy3DAsync(halPluginStream stream, const halMemcpy3DParams* params) noexcept;
halError memcpyPeerAsync(halPluginStream stream, void* dst, halPluginDevice dstDevice,
                         const void* src, halPluginDevice srcDevice, size_t count) noexcept;
halError memsetAsync(halPluginStream stream, void* dst, unsigned char value, size_t count) noexcept;
halError ipcMemGetHandle(halPluginDevice device, void* base, halPluginIpcHandle* handle) noexcept;
halError ipcMemOpenHandle(halPluginDevice device, const halPluginIpcHandle* handle, size_t size,
                          void** base) noexcept;
halError ipcMemCloseHandle(halPluginDevice device, void* base) noexcept;

// module.cpp
halError moduleLoadData(halPluginDevice device, const void* image, size_t size,
                        halPluginModule* module) noexcept;
halError moduleUnload(halPluginModule module) noexcept;
halError moduleGetFunction(halPluginModule module, const char* name,
                           halPluginFunction* function) noexcept;
halError launchKernel(halPluginStream stream, halPluginFunction function, halDim3 grid,
                      halDim3 block, size_t dynamicSharedBytes, const halKernelArg* args,
                      uint32_t numArgs) noexcept;

}  // namespace polyhal::cpu

#endif  // POLYHAL_CPU_ENTRIES_H_
