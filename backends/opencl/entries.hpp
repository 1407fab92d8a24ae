// The dispatch-table entries of the OpenCL backend, one group per source file. Each does what
// its slot in <polyhal/plugin.h> specifies.
#ifndef POLYHAL_OPENCL_ENTRIES_HPP_
#define POLYHAL_OPENCL_ENTRIES_HPP_

#include <polyhal/plugin.h>

namespace polyhal::opencl {

// platform.cpp
halError initialize();
halError deviceGetCount(int* count);

// device.cpp
halError deviceOpen(int ordinal, halPluginDevice* device);
void deviceClose(halPluginDevice device);
halError deviceGetInfo(halPluginDevice device, halPluginDeviceInfo* info);
halError deviceSynchronize(halPluginDevice device);

// stream.cpp
halError streamCreate(halPluginDevice device, int priority, uint32_t flags,
                      halPluginStream* stream);
halError streamDestroy(halPluginStream stream);
halError streamSynchronize(halPluginStream stream);
halError streamQuery(halPluginStream stream);
halError streamWaitEvent(halPluginStream stream, halPluginEvent event);
halError streamGetNativeHandle(halPluginStream stream, void** native);

// event.cpp
halError eventCreate(halPluginDevice device, uint32_t flags, halPluginEvent* event);
halError eventDestroy(halPluginEvent event);
halError eventRecord(halPluginEvent event, halPluginStream stream);
halError eventQuery(halPluginEvent event);
halError eventSynchronize(halPluginEvent event);
halError eventElapsedTime(float* ms, halPluginEvent start, halPluginEvent end);

// memory.cpp
halError memAllocDevice(halPluginDevice device, size_t size, void** ptr);
halError memFreeDevice(halPluginDevice device, void* ptr);
halError memAllocHost(halPluginDevice device, size_t size, void** ptr);
halError memFreeHost(halPluginDevice device, void* ptr);
halError memcpyAsync(halPluginStream stream, void* dst, const void* src, size_t count,
                     halMemcpyKind kind);
halError memsetAsync(halPluginStream stream, void* dst, unsigned char value, size_t count);

// host_func.cpp
halError launchHostFunc(halPluginStream stream, halHostFn fn, void* userData);

// module.cpp
halError moduleLoadData(halPluginDevice device, const void* image, size_t size,
                        halPluginModule* module);
halError moduleUnload(halPluginModule module);
halError moduleGetFunction(halPluginModule module, const char* name, halPluginFunction* function);

// launch.cpp
halError launchKernel(halPluginStream stream, halPluginFunction function, halDim3 grid,
                      halDim3 block, size_t dynamicSharedBytes, const halKernelArg* args,
                      uint32_t numArgs);

}  // namespace polyhal::opencl

#endif  // POLYHAL_OPENCL_ENTRIES_HPP_
