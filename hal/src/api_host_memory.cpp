// Host memory shared with devices beyond halMallocHost: halHostRegister and halHostUnregister
// (the caller's memory, pinned), halMallocManaged (one pointer for the host and a device; halFree
// frees it through freeManaged).
#include "api_host_memory.hpp"

#include <mutex>

#include "copy_plan.hpp"
#include "log.hpp"
#include "stream_ops.hpp"

using namespace polyhal;

namespace {

halError requireCapability(const Device* device, halDeviceCapability capability, const char* what,
                           const char* operation) {
    if (device->supports(capability)) return HAL_SUCCESS;
    return fail(HAL_ERROR_NOT_SUPPORTED, "{}: the {} backend (device {}) has no {}", operation,
                device->backend->name, device->ordinal, what);
}

// Refuses a range that is, at either end, memory polyhal allocated for a device or as managed
// memory: registering it would pin what is not the caller's.
halError refuseAllocatedEnds(const void* ptr, size_t size, const char* operation) {
    const auto* first = static_cast<const unsigned char*>(ptr);
    for (const void* end :
         {static_cast<const void*>(first), static_cast<const void*>(first + size - 1)}) {
        const Operand where = locate(end);
        if (where.knownDevice() || where.managed()) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "{}: [{}, +{}) reaches {} memory at {}; only host memory the program "
                        "allocated itself can be registered",
                        operation, ptr, size, where.managed() ? "managed" : "device", end);
        }
    }
    return HAL_SUCCESS;
}

halError alreadyRegistered(const void* ptr, size_t size, const AddressRange& existing,
                           const char* what, const char* operation) {
    return fail(HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "{}: [{}, +{}) overlaps {} [{}, +{})",
                operation, ptr, size, what, reinterpret_cast<const void*>(existing.base),
                existing.size);
}

// Checked mode sees what the device does with managed memory, not the host's loads and stores:
// said once, so that a clean report is not taken for more than it is.
void noteManagedBlindSpot() {
    if (!check::enabled(check::kRaces)) return;
    static std::once_flag once;
    std::call_once(once, [] {
        logger().warn(
            "checked mode: managed memory (halMallocManaged) is in use; host reads and writes "
            "of it are invisible to the race check, so a host access while a kernel or copy "
            "may still use it is not reported (synchronise first; see halMallocManaged in "
            "hal.h)");
    });
}

}  // namespace

namespace polyhal {

std::optional<halError> freeManaged(void* ptr, const char* operation) {
    const auto found = runtime().managedAllocations.find(ptr);
    if (!found || found->base != reinterpret_cast<uintptr_t>(ptr)) return std::nullopt;
    Device* device = found->device;
    // As cudaFree: no work of the device may still use the memory.
    if (halError e = synchronizeDevice(device, operation)) return e;
    if (!runtime().managedAllocations.eraseExact(ptr)) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: {} was freed by another thread meanwhile",
                    operation, ptr);
    }
    check::freed(device, ptr, operation);
    // The bytes go back to the vendor, which may hand them to anything next (on the CPU backend,
    // the program's own malloc): what the detector knew of them goes too.
    check::segmentReleased(ptr);
    return checked(device->vtable->memFreeManaged(device->native, ptr), device, operation);
}

void releaseHostMemory(Device* device) {
    Runtime& rt = runtime();
    const halPluginDispatchTable& vt = *device->vtable;
    for (const AddressRange& registered : rt.hostRegistrations.eraseDevice(device)) {
        vt.memHostUnregister(device->native, reinterpret_cast<void*>(registered.base));
    }
    for (const AddressRange& managed : rt.managedAllocations.eraseDevice(device)) {
        void* base = reinterpret_cast<void*>(managed.base);
        check::freed(device, base, "halResetDevice");
        check::segmentReleased(base);
        vt.memFreeManaged(device->native, base);
    }
}

}  // namespace polyhal

extern "C" {

HAL_API halError halHostRegister(void* ptr, size_t size, unsigned int flags) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        if (ptr == nullptr) return fail(HAL_ERROR_INVALID_VALUE, "{}: ptr is NULL", op);
        if (size == 0) return fail(HAL_ERROR_INVALID_VALUE, "{}: size is 0", op);
        if (flags != 0) {
            return fail(HAL_ERROR_INVALID_VALUE, "{}: flags {:#x} are not 0 (no flag is defined)",
                        op, flags);
        }
        const auto base = reinterpret_cast<uintptr_t>(ptr);
        if (base + size < base) {
            return fail(HAL_ERROR_INVALID_VALUE, "{}: [{}, +{}) wraps the address space", op, ptr,
                        size);
        }
        Device* device = currentDevice();
        if (halError e = requireCapability(device, HAL_DEVICE_CAP_HOST_REGISTER,
                                           "host memory registration", op)) {
            return e;
        }
        if (halError e = refuseAllocatedEnds(ptr, size, op)) return e;
        Runtime& rt = runtime();
        if (const auto pinned = rt.hostAllocations.overlapping(base, size)) {
            return alreadyRegistered(ptr, size, *pinned, "halMallocHost memory", op);
        }
        // Claimed before the backend is asked, so that two threads cannot both register it.
        if (const auto existing = rt.hostRegistrations.insertDisjoint({base, size, device})) {
            return alreadyRegistered(ptr, size, *existing, "the range registered at", op);
        }
        if (halError e =
                checked(device->vtable->memHostRegister(device->native, ptr, size), device, op)) {
            rt.hostRegistrations.eraseExact(ptr);
            return e;
        }
        return HAL_SUCCESS;
    });
}

HAL_API halError halHostUnregister(void* ptr) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        const auto registered = runtime().hostRegistrations.eraseExact(ptr);
        if (!registered) {
            const auto inside = runtime().hostRegistrations.find(ptr);
            if (inside) {
                return fail(HAL_ERROR_HOST_MEMORY_NOT_REGISTERED,
                            "{}: {} is inside the range registered at {}; pass that pointer", op,
                            ptr, reinterpret_cast<const void*>(inside->base));
            }
            return fail(HAL_ERROR_HOST_MEMORY_NOT_REGISTERED,
                        "{}: {} was not registered with halHostRegister (or is unregistered "
                        "already)",
                        op, ptr);
        }
        Device* device = registered->device;
        return checked(device->vtable->memHostUnregister(device->native, ptr), device, op);
    });
}

HAL_API halError halMallocManaged(void** ptr, size_t size, unsigned int flags) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        if (halError e = requireOutput(ptr, op, "ptr")) return e;
        if (size == 0) return fail(HAL_ERROR_INVALID_VALUE, "{}: size is 0", op);
        if (flags != 0) {
            return fail(HAL_ERROR_INVALID_VALUE, "{}: flags {:#x} are not 0 (no flag is defined)",
                        op, flags);
        }
        Device* device = currentDevice();
        if (halError e =
                requireCapability(device, HAL_DEVICE_CAP_MANAGED_MEMORY, "managed memory", op)) {
            return e;
        }
        void* memory = nullptr;
        if (halError e = checked(device->vtable->memAllocManaged(device->native, size, &memory),
                                 device, op)) {
            return e;
        }
        runtime().managedAllocations.insert({reinterpret_cast<uintptr_t>(memory), size, device});
        check::segmentReserved(memory, size);
        check::allocated(device, memory, size, op);
        noteManagedBlindSpot();
        *ptr = memory;
        return HAL_SUCCESS;
    });
}

}  // extern "C"
