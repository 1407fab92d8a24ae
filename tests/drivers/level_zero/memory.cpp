// Device and host memory.
//
// Device memory is a memory file mapped twice: the address handed out has no access at all, so
// a host access by the caller faults at once, and the double reads and writes through its own
// second mapping. Host memory (zeMemAllocHost) is ordinary host memory.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "driver_double.hpp"
#include "entries.hpp"

namespace zedouble {
namespace {

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
    close(file);
    if (handedOut == MAP_FAILED || alias == MAP_FAILED) {
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
                   device};
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

ze_result_t ZE_APICALL memFree(ze_context_handle_t context, void* ptr) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeMemFree");
    const auto found = state().allocations.find(reinterpret_cast<uintptr_t>(ptr));
    if (found == state().allocations.end()) {
        breach("zeMemFree: %p is not the start of an allocation of this driver", ptr);
    }
    const Allocation allocation = found->second;
    if (allocation.context != context) {
        breach("zeMemFree: %p was allocated in context %p, freed in context %p", ptr,
               static_cast<void*>(allocation.context), static_cast<void*>(context));
    }
    if (allocation.pendingUses > 0) {
        breach("zeMemFree: %p is freed while %d appended command(s) using it have not finished",
               ptr, allocation.pendingUses);
    }
    state().allocations.erase(found);
    const size_t mapped = pageRounded(allocation.size);
    munmap(allocation.base, mapped);
    if (allocation.alias != allocation.base) munmap(allocation.alias, mapped);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL memGetAllocProperties(ze_context_handle_t context, const void* ptr,
                                             ze_memory_allocation_properties_t* properties,
                                             ze_device_handle_t* device) {
    std::lock_guard<std::mutex> lock(state().mutex);
    expectLive(context, Kind::Context, "zeMemGetAllocProperties");
    const Allocation* allocation = findAllocation(ptr, 1, "zeMemGetAllocProperties");
    properties->type = allocation == nullptr                  ? ZE_MEMORY_TYPE_UNKNOWN
                       : allocation->type == Allocation::Host ? ZE_MEMORY_TYPE_HOST
                                                              : ZE_MEMORY_TYPE_DEVICE;
    properties->id = allocation == nullptr ? 0 : reinterpret_cast<uintptr_t>(allocation->base);
    properties->pageSize = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    if (device != nullptr) *device = allocation == nullptr ? nullptr : allocation->device;
    return ZE_RESULT_SUCCESS;
}

}  // namespace zedouble
