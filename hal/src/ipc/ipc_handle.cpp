// Implements ipc_handle.hpp.
#include "ipc_handle.hpp"

#include <unistd.h>

#include <cstring>
#include <string>

#include "device.hpp"
#include "error.hpp"

namespace polyhal {

static_assert(sizeof(IpcHandle) <= HAL_IPC_HANDLE_SIZE, "the core's handle must fit hal.h's");
static_assert(sizeof(halIpcMemHandle) == HAL_IPC_HANDLE_SIZE &&
                  sizeof(halIpcEventHandle) == HAL_IPC_HANDLE_SIZE,
              "IPC handles are plain bytes");

IpcHandle makeIpcHandle(IpcKind kind, const Device* device) {
    IpcHandle handle;
    std::memset(&handle, 0, sizeof handle);
    handle.kind = kind;
    handle.layout = kIpcLayout;
    handle.exporterPid = static_cast<uint32_t>(getpid());
    std::strncpy(handle.backend, device->backend->name.c_str(), sizeof handle.backend - 1);
    return handle;
}

halError readIpcHandle(const unsigned char* bytes, IpcKind kind, const Device* device,
                       const char* operation, IpcHandle* handle) {
    std::memcpy(handle, bytes, sizeof *handle);
    const char* expected = kind == IpcKind::kMemory ? "halIpcGetMemHandle" : "halIpcGetEventHandle";
    if (handle->kind != kind || handle->layout != kIpcLayout) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: the handle was not made by {}", operation,
                    expected);
    }
    if (handle->exporterPid == static_cast<uint32_t>(getpid())) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: the handle was exported by this process; use the {} itself", operation,
                    kind == IpcKind::kMemory ? "pointer" : "event");
    }
    const std::string backend(handle->backend, strnlen(handle->backend, sizeof handle->backend));
    if (backend != device->backend->name) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: the handle was exported by the {} backend, the current device {} is of "
                    "the {} backend",
                    operation, backend, device->ordinal, device->backend->name);
    }
    return HAL_SUCCESS;
}

}  // namespace polyhal
