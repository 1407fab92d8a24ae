// Memory shared between processes: halIpcGetMemHandle, halIpcOpenMemHandle,
// halIpcCloseMemHandle.
#include "ipc_handle.hpp"
#include "stream_ops.hpp"

using namespace polyhal;

namespace {

halError requireIpcMemory(const Device* device, const char* operation) {
    if (device->supports(HAL_DEVICE_CAP_IPC_MEMORY)) return HAL_SUCCESS;
    return fail(HAL_ERROR_NOT_SUPPORTED,
                "{}: the {} backend (device {}) cannot share memory between processes", operation,
                device->backend->name, device->ordinal);
}

}  // namespace

extern "C" {

HAL_API halError halIpcGetMemHandle(halIpcMemHandle* handle, void* devPtr) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (halError e = requireOutput(handle, op, "handle")) return e;
        for (const auto& owner : runtime().devices) {
            Device* device = owner.get();
            allocator::ExportedBlock block;
            if (!device->pool->exportBlock(devPtr, &block)) continue;
            if (halError e = requireIpcMemory(device, op)) return e;
            IpcHandle exported = makeIpcHandle(IpcKind::kMemory, device);
            exported.allocationSize = block.segmentSize;
            exported.offset = block.offset;
            exported.size = block.size;
            if (halError e = checked(device->vtable->ipcMemGetHandle(
                                         device->native, block.segmentBase, &exported.plugin),
                                     device, op)) {
                return e;
            }
            storeIpcHandle(exported, handle);
            return HAL_SUCCESS;
        }
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: {} is not the start of a live pool allocation "
                    "(halMalloc or halMallocAsync)",
                    op, devPtr);
    });
}

HAL_API halError halIpcOpenMemHandle(void** devPtr, halIpcMemHandle handle, uint32_t flags) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, operation = __func__] {
        if (halError e = requireOutput(devPtr, operation, "devPtr")) return e;
        if (flags != 0) {
            return fail(HAL_ERROR_INVALID_VALUE, "{}: flags must be 0 (got {:#x})", operation,
                        flags);
        }
        Device* device = currentDevice();
        IpcHandle imported;
        if (halError e =
                readIpcHandle(handle.reserved, IpcKind::kMemory, device, operation, &imported)) {
            return e;
        }
        if (imported.allocationSize == 0 || imported.size == 0 ||
            imported.offset > imported.allocationSize ||
            imported.size > imported.allocationSize - imported.offset) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "{}: the handle is damaged (a block of {} bytes at offset {} of an "
                        "allocation of {} bytes)",
                        operation, imported.size, imported.offset, imported.allocationSize);
        }
        if (halError e = requireIpcMemory(device, operation)) return e;
        void* mapping = nullptr;
        if (halError e = checked(device->vtable->ipcMemOpenHandle(
                                     device->native, &imported.plugin,
                                     static_cast<size_t>(imported.allocationSize), &mapping),
                                 device, operation)) {
            return e;
        }
        auto* block = static_cast<unsigned char*>(mapping) + imported.offset;
        try {
            runtime().ipcImports.insert({reinterpret_cast<uintptr_t>(block),
                                         static_cast<size_t>(imported.size), device, mapping});
        } catch (...) {
            device->vtable->ipcMemCloseHandle(device->native, mapping);
            throw;
        }
        *devPtr = block;
        return HAL_SUCCESS;
    });
}

HAL_API halError halIpcCloseMemHandle(void* devPtr) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, operation = __func__] {
        const auto opened = runtime().ipcImports.find(devPtr);
        if (!opened || opened->base != reinterpret_cast<uintptr_t>(devPtr)) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "{}: {} is not memory opened with halIpcOpenMemHandle (or it was closed "
                        "already)",
                        operation, devPtr);
        }
        Device* device = opened->device;
        if (halError e = synchronizeDevice(device, operation)) return e;
        if (!runtime().ipcImports.eraseExact(devPtr)) {
            return fail(HAL_ERROR_INVALID_VALUE, "{}: {} was closed already", operation, devPtr);
        }
        return checked(device->vtable->ipcMemCloseHandle(device->native, opened->mapping), device,
                       operation);
    });
}

}  // extern "C"
