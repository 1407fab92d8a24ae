// Device and host memory, and device memory shared between processes.
//
// Device memory is a memory file mapped twice: the address handed out has no access at all, so
// a host access by the caller faults at once, and the double reads and writes through its own
// second mapping. Host memory (zeMemAllocHost) is ordinary host memory. An IPC handle names a
// device allocation's memory file (tests/backends/common/ipc_mappings.hpp); another process maps
// that file twice in the same way.
//
// IPC handles are counted as compute-runtime counts them: each zeMemGetIpcHandle of an allocation
// takes a reference to its one exported handle (level_zero/core/source/context/context.cpp:
// 2232-2239), zeMemPutIpcHandle drops one (825-860), and zeMemFree drops only one where the
// allocation came from its device memory pool (584-585), the rest leaking the exported handle.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "driver_double.hpp"
#include "entries.hpp"
#include "ipc_mappings.hpp"

namespace zedouble {
namespace {

uint64_t ipcHandlesPutBack = 0;  // successful zeMemPutIpcHandle calls, for tests

uint64_t deviceBytesInUse(ze_device_handle_t device) {
    uint64_t used = 0;
    for (const auto& [base, allocation] : state().allocations) {
        if (allocation.device == device) used += allocation.size;
    }
    return used;
}

bool relaxedLimits(const void* next) {
    for (auto* header = static_cast<const ze_base_desc_t*>(next); header != nullptr;
         header = static_cast<const ze_base_desc_t*>(header->pNext)) {
        if (header->stype == ZE_STRUCTURE_TYPE_RELAXED_ALLOCATION_LIMITS_EXP_DESC) {
            const auto* relaxed =
                reinterpret_cast<const ze_relaxed_allocation_limits_exp_desc_t*>(header);
            return (relaxed->flags & ZE_RELAXED_ALLOCATION_LIMITS_EXP_FLAG_MAX_SIZE) != 0;
        }
    }
    return false;
}

size_t pageRounded(size_t size) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return (size + page - 1) / page * page;
}

void checkAlignment(size_t alignment, const char* call) {
    if (alignment != 0 && (alignment & (alignment - 1)) != 0) {
        breach("%s: alignment %zu is not a power of two", call, alignment);
    }
}

// Unmaps a device or host allocation, or a mapping of another process's device memory, once no
// command uses it any more.
// `released` says how in messages ("freed", "closed").
void release(std::map<uintptr_t, Allocation>::iterator found, ze_context_handle_t context,
             const char* call, const char* released) {
    const Allocation allocation = found->second;
    void* ptr = allocation.base;
    if (allocation.context != context) {
        breach("%s: %p was allocated in context %p, %s in context %p", call, ptr,
               static_cast<void*>(allocation.context), released, static_cast<void*>(context));
    }
    if (allocation.pendingUses > 0 && !state().deviceLost) {  // a lost device's work is over
        breach("%s: %p is %s while %d appended command(s) using it have not finished", call, ptr,
               released, allocation.pendingUses);
    }
    state().allocations.erase(found);
    const size_t mapped = pageRounded(allocation.size);
    munmap(allocation.base, mapped);
    if (allocation.alias != allocation.base) munmap(allocation.alias, mapped);
    if (allocation.file >= 0) close(allocation.file);
}

}  // namespace

ze_result_t ZE_APICALL memAllocDevice(ze_context_handle_t context,
                                      const ze_device_mem_alloc_desc_t* desc, size_t size,
                                      size_t alignment, ze_device_handle_t device, void** ptr) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeMemAllocDevice");
    checkAlignment(alignment, "zeMemAllocDevice");
    if (device->driver != context->driver) {
        breach("zeMemAllocDevice: device %p is not a device of context %p",
               static_cast<void*>(device), static_cast<void*>(context));
    }
    ze_device_properties_t properties{};
    properties.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    deviceGetProperties(device, &properties);
    if (size > properties.maxMemAllocSize && !relaxedLimits(desc->pNext)) {
        return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    }
    if (size > deviceMemoryBytes() - deviceBytesInUse(device)) {
        return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    const size_t mapped = pageRounded(size);
    const int file = memfd_create("zedouble-device-memory", MFD_CLOEXEC);
    if (file < 0) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    void* handedOut = MAP_FAILED;
    void* alias = MAP_FAILED;
    if (ftruncate(file, static_cast<off_t>(mapped)) == 0) {
        handedOut = mmap(nullptr, mapped, PROT_NONE, MAP_SHARED, file, 0);
        alias = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
    }
    if (handedOut == MAP_FAILED || alias == MAP_FAILED) {
        close(file);
        if (handedOut != MAP_FAILED) munmap(handedOut, mapped);
        if (alias != MAP_FAILED) munmap(alias, mapped);
        return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    state().allocations[reinterpret_cast<uintptr_t>(handedOut)] =
        Allocation{Allocation::Device,
                   static_cast<char*>(handedOut),
                   size,
                   static_cast<char*>(alias),
                   context,
                   device,
                   0,
                   file};
    *ptr = handedOut;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL memAllocHost(ze_context_handle_t context, const ze_host_mem_alloc_desc_t*,
                                    size_t size, size_t alignment, void** ptr) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeMemAllocHost");
    checkAlignment(alignment, "zeMemAllocHost");
    void* memory = mmap(nullptr, pageRounded(size), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    state().allocations[reinterpret_cast<uintptr_t>(memory)] = Allocation{
        Allocation::Host, static_cast<char*>(memory), size, static_cast<char*>(memory), context,
        nullptr};
    *ptr = memory;
    return ZE_RESULT_SUCCESS;
}

// Host memory the device reaches at the same address, as host memory is; it counts against the
// device's memory, where the driver migrates it.
ze_result_t ZE_APICALL memAllocShared(ze_context_handle_t context,
                                      const ze_device_mem_alloc_desc_t*,
                                      const ze_host_mem_alloc_desc_t*, size_t size,
                                      size_t alignment, ze_device_handle_t device, void** ptr) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeMemAllocShared");
    checkAlignment(alignment, "zeMemAllocShared");
    if (device != nullptr && device->driver != context->driver) {
        breach("zeMemAllocShared: device %p is not a device of context %p",
               static_cast<void*>(device), static_cast<void*>(context));
    }
    if (device != nullptr && size > deviceMemoryBytes() - deviceBytesInUse(device)) {
        return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    void* memory = mmap(nullptr, pageRounded(size), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    state().allocations[reinterpret_cast<uintptr_t>(memory)] =
        Allocation{Allocation::Shared,
                   static_cast<char*>(memory),
                   size,
                   static_cast<char*>(memory),
                   context,
                   device};
    *ptr = memory;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL memFree(ze_context_handle_t context, void* ptr) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeMemFree");
    const auto found = state().allocations.find(reinterpret_cast<uintptr_t>(ptr));
    if (found == state().allocations.end()) {
        breach("zeMemFree: %p is not the start of an allocation of this driver", ptr);
    }
    if (found->second.imported) {
        breach(
            "zeMemFree: %p was opened with zeMemOpenIpcHandle: it is closed with "
            "zeMemCloseIpcHandle, never freed",
            ptr);
    }
    if (found->second.ipcHandles > 1) {
        breach(
            "zeMemFree: %p is freed with %d IPC handle references outstanding, and a free drops "
            "one: put the others back with zeMemPutIpcHandle (or take one handle per "
            "allocation)",
            ptr, found->second.ipcHandles);
    }
    release(found, context, "zeMemFree", "freed");
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL memGetAllocProperties(ze_context_handle_t context, const void* ptr,
                                             ze_memory_allocation_properties_t* properties,
                                             ze_device_handle_t* device) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeMemGetAllocProperties");
    const Allocation* allocation = findAllocation(ptr, 1, "zeMemGetAllocProperties");
    properties->type = allocation == nullptr                    ? ZE_MEMORY_TYPE_UNKNOWN
                       : allocation->type == Allocation::Host   ? ZE_MEMORY_TYPE_HOST
                       : allocation->type == Allocation::Shared ? ZE_MEMORY_TYPE_SHARED
                                                                : ZE_MEMORY_TYPE_DEVICE;
    properties->id = allocation == nullptr ? 0 : reinterpret_cast<uintptr_t>(allocation->base);
    properties->pageSize = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    if (device != nullptr) *device = allocation == nullptr ? nullptr : allocation->device;
    return ZE_RESULT_SUCCESS;
}

// Only the base of a device allocation (zeMemAllocDevice) of the context is exported, as the
// specification requires.
ze_result_t ZE_APICALL memGetIpcHandle(ze_context_handle_t context, const void* ptr,
                                       ze_ipc_mem_handle_t* handle) {
    static_assert(sizeof(polyhal::doubles::IpcName) <= sizeof handle->data,
                  "a name must fit the handle");
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeMemGetIpcHandle");
    const auto found = state().allocations.find(reinterpret_cast<uintptr_t>(ptr));
    if (found == state().allocations.end() || found->second.type != Allocation::Device ||
        found->second.imported) {
        breach("zeMemGetIpcHandle: %p is not the base of a device allocation (zeMemAllocDevice)",
               ptr);
    }
    Allocation& allocation = found->second;
    if (allocation.context != context) {
        breach("zeMemGetIpcHandle: %p was allocated in context %p, exported in context %p", ptr,
               static_cast<void*>(allocation.context), static_cast<void*>(context));
    }
    ++allocation.ipcHandles;
    struct stat info {};
    fstat(allocation.file, &info);
    const polyhal::doubles::IpcName name{polyhal::doubles::kIpcNameMagic,
                                         static_cast<uint32_t>(getpid()),
                                         allocation.file,
                                         static_cast<int32_t>(allocation.device->ordinal),
                                         static_cast<uint64_t>(info.st_ino),
                                         0,
                                         allocation.size};
    std::memset(handle->data, 0, sizeof handle->data);
    std::memcpy(handle->data, &name, sizeof name);
    return ZE_RESULT_SUCCESS;
}

// Maps another process's allocation for `device`; each open is a mapping of its own. A handle
// whose exporter has exited or freed the memory is an invalid argument, as a driver that cannot
// import it answers.
ze_result_t ZE_APICALL memOpenIpcHandle(ze_context_handle_t context, ze_device_handle_t device,
                                        ze_ipc_mem_handle_t handle, ze_ipc_memory_flags_t flags,
                                        void** ptr) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeMemOpenIpcHandle");
    if (device->driver != context->driver) {
        breach("zeMemOpenIpcHandle: device %p is not a device of context %p",
               static_cast<void*>(device), static_cast<void*>(context));
    }
    if (flags > (ZE_IPC_MEMORY_FLAG_BIAS_CACHED | ZE_IPC_MEMORY_FLAG_BIAS_UNCACHED)) {
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    }
    polyhal::doubles::IpcName name;
    std::memcpy(&name, handle.data, sizeof name);
    if (name.magic != polyhal::doubles::kIpcNameMagic || name.size == 0) {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    const int file = polyhal::doubles::openNamedFile(name);
    if (file < 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    const size_t mapped = pageRounded(name.size);
    void* handedOut = mmap(nullptr, mapped, PROT_NONE, MAP_SHARED, file, 0);
    void* alias = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
    close(file);
    if (handedOut == MAP_FAILED || alias == MAP_FAILED) {
        if (handedOut != MAP_FAILED) munmap(handedOut, mapped);
        if (alias != MAP_FAILED) munmap(alias, mapped);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    Allocation opened{Allocation::Device,
                      static_cast<char*>(handedOut),
                      static_cast<size_t>(name.size),
                      static_cast<char*>(alias),
                      context,
                      device};
    opened.imported = true;
    state().allocations[reinterpret_cast<uintptr_t>(handedOut)] = opened;
    *ptr = handedOut;
    return ZE_RESULT_SUCCESS;
}

// A handle this process exported and has not put back as often as it took it.
ze_result_t ZE_APICALL memPutIpcHandle(ze_context_handle_t context, ze_ipc_mem_handle_t handle) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeMemPutIpcHandle");
    polyhal::doubles::IpcName name;
    std::memcpy(&name, handle.data, sizeof name);
    const bool ours = name.magic == polyhal::doubles::kIpcNameMagic &&
                      name.pid == static_cast<uint32_t>(getpid());
    for (auto& [base, allocation] : state().allocations) {
        if (!ours || allocation.file != name.file || allocation.imported) continue;
        if (allocation.context != context) {
            breach("zeMemPutIpcHandle: the handle of %p is put back in context %p, not its own %p",
                   allocation.base, static_cast<void*>(context),
                   static_cast<void*>(allocation.context));
        }
        if (allocation.ipcHandles == 0) {
            breach("zeMemPutIpcHandle: the handle of %p is put back more often than it was taken",
                   allocation.base);
        }
        --allocation.ipcHandles;
        ++ipcHandlesPutBack;
        return ZE_RESULT_SUCCESS;
    }
    breach("zeMemPutIpcHandle: the handle names no live allocation this process exported");
}

// Only what zeMemOpenIpcHandle returned is closed, once no command uses it any more.
ze_result_t ZE_APICALL memCloseIpcHandle(ze_context_handle_t context, const void* ptr) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeMemCloseIpcHandle");
    const auto found = state().allocations.find(reinterpret_cast<uintptr_t>(ptr));
    if (found == state().allocations.end() || !found->second.imported) {
        breach(
            "zeMemCloseIpcHandle: %p was not opened with zeMemOpenIpcHandle (or was closed "
            "already)",
            ptr);
    }
    release(found, context, "zeMemCloseIpcHandle", "closed");
    return ZE_RESULT_SUCCESS;
}

}  // namespace zedouble

// For tests: how many IPC handles have been put back.
extern "C" __attribute__((visibility("default"))) uint64_t zedoubleIpcHandlesPutBack() {
    std::lock_guard<std::mutex> lock(zedouble::state().mutex);
    return zedouble::ipcHandlesPutBack;
}
