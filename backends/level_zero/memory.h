// Device and host memory, copies and fills.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_MEMORY_H_
#define POLYHAL_BACKENDS_LEVEL_ZERO_MEMORY_H_

#include <polyhal/plugin.h>

namespace polyhal::level_zero {

halError memAllocDevice(halPluginDevice device, size_t size, void** ptr);
halError memFreeDevice(halPluginDevice device, void* ptr);
halError memAllocHost(halPluginDevice device, size_t size, void** ptr);
halError memFreeHost(halPluginDevice device, void* ptr);
halError memcpyAsync(halPluginStream stream, void* dst, const void* src, size_t count,
                     halMemcpyKind kind);
halError memcpy3DAsync(halPluginStream stream, const halMemcpy3DParams* box);
// Between devices of one context (HAL_DEVICE_CAP_PEER_COPY): one copy in the stream's order.
halError memcpyPeerAsync(halPluginStream stream, void* dst, halPluginDevice dstDevice,
                         const void* src, halPluginDevice srcDevice, size_t count);
halError memsetAsync(halPluginStream stream, void* dst, unsigned char value, size_t count);

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_MEMORY_H_
