// halGetMemInfo: a device's free and total memory.
#include "api.hpp"

using namespace polyhal;

extern "C" {

HAL_API halError halGetMemInfo(size_t* freeBytes, size_t* totalBytes) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (halError e = requireOutput(freeBytes, op, "freeBytes")) return e;
        if (halError e = requireOutput(totalBytes, op, "totalBytes")) return e;
        Device* device = currentDevice();
        if (device->vtable->memGetInfo != nullptr) {
            return checked(device->vtable->memGetInfo(device->native, freeBytes, totalBytes),
                           device, op);
        }
        // What polyhal itself holds is all it knows of: its pool's segments.
        const uint64_t total = device->info.totalMemory;
        const uint64_t held = device->pool->stats().bytesReserved;
        *totalBytes = static_cast<size_t>(total);
        *freeBytes = static_cast<size_t>(held < total ? total - held : 0);
        return HAL_SUCCESS;
    });
}

}  // extern "C"
