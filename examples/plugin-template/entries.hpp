// The template backend's dispatch-table entries, by the file that implements them. Each one does
// what its comment in <polyhal/plugin.h> says; plugin.cpp puts them in the table.
#ifndef POLYHAL_TEMPLATE_ENTRIES_HPP_
#define POLYHAL_TEMPLATE_ENTRIES_HPP_

#include <polyhal/plugin.h>

namespace polyhal_template {

// device.cpp
halError initialize();
halError deviceGetCount(int* count);
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
halError launchHostFunc(halPluginStream stream, halHostFn fn, void* userData);
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
halError memcpyAsync(halPluginStream stream, void* dst, const void* src, size_t count,
                     halMemcpyKind kind);
halError memsetAsync(halPluginStream stream, void* dst, unsigned char value, size_t count);

}  // namespace polyhal_template

#endif  // POLYHAL_TEMPLATE_ENTRIES_HPP_
