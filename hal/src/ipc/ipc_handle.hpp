// The bytes of halIpcMemHandle and halIpcEventHandle: the core's header (what kind of handle,
// which process and backend made it, where the block lies in its allocation) and the plugin's
// part. Plain data, the same in every process of one node.
#ifndef POLYHAL_HAL_SRC_IPC_IPC_HANDLE_HPP_
#define POLYHAL_HAL_SRC_IPC_IPC_HANDLE_HPP_

#include <polyhal/plugin.h>

#include <cstdint>
#include <cstring>

namespace polyhal {

struct Device;

enum class IpcKind : uint32_t {
    kMemory = 0x4d494850u,  // "PHIM"
    kEvent = 0x45494850u,   // "PHIE"
};

struct IpcHandle {
    IpcKind kind;
    uint32_t layout;  // kIpcLayout
    uint32_t exporterPid;
    uint32_t reserved;
    char backend[16];         // the exporting backend's name, NUL-padded
    uint64_t allocationSize;  // of the backend allocation (memory handles)
    uint64_t offset;          // of the block within it
    uint64_t size;            // of the block, as the exporter asked for it
    halPluginIpcHandle plugin;
};

constexpr uint32_t kIpcLayout = 1;

// Fills the header of a handle of `kind` exported by this process from `device`.
IpcHandle makeIpcHandle(IpcKind kind, const Device* device);

// Writes `handle` into the bytes of a public handle (halIpcMemHandle, halIpcEventHandle), the
// rest zeroed.
template <typename PublicHandle>
void storeIpcHandle(const IpcHandle& handle, PublicHandle* out) {
    std::memset(out->reserved, 0, sizeof out->reserved);
    std::memcpy(out->reserved, &handle, sizeof handle);
}

// Checks bytes received as a handle of `kind` before anything trusts them: a polyhal handle of
// that kind, from another process, of the backend of `device` (the importing device).
// Errors: HAL_ERROR_INVALID_VALUE with the reason.
halError readIpcHandle(const unsigned char* bytes, IpcKind kind, const Device* device,
                       const char* operation, IpcHandle* handle);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_IPC_IPC_HANDLE_HPP_
