// Peer access between devices: halDeviceCanAccessPeer, halDeviceEnablePeerAccess,
// halDeviceDisablePeerAccess.
#include <algorithm>
#include <mutex>

#include "api.hpp"

using namespace polyhal;

namespace {

bool hasPeerEntries(const halPluginDispatchTable& table) {
    return table.deviceCanAccessPeer != nullptr && table.deviceEnablePeerAccess != nullptr &&
           table.deviceDisablePeerAccess != nullptr;
}

// Whether kernels of `device` can be given access to `peer`'s memory; `why` says why not.
halError canAccess(Device* device, Device* peer, bool* result, const char** why,
                   const char* operation) {
    *result = false;
    if (device == peer) {
        *why = "a device and itself are not peers";
    } else if (device->backend != peer->backend) {
        *why = "the devices belong to different backends";
    } else if (device->supports(HAL_DEVICE_CAP_HOST_ACCESSIBLE) &&
               peer->supports(HAL_DEVICE_CAP_HOST_ACCESSIBLE)) {
        *result = true;  // host memory: any device of the process can reach it
    } else if (hasPeerEntries(*device->vtable)) {
        int vendorSays = 0;
        if (halError e = checked(
                device->vtable->deviceCanAccessPeer(device->native, peer->native, &vendorSays),
                device, operation)) {
            return e;
        }
        *result = vendorSays != 0;
        *why = "the backend reports no peer access between them";
    } else {
        *why = "the backend offers no peer access";
    }
    return HAL_SUCCESS;
}

// Does the backend need telling? Not between host-accessible devices, where access is inherent.
bool backendGrants(Device* device, Device* peer) {
    return !(device->supports(HAL_DEVICE_CAP_HOST_ACCESSIBLE) &&
             peer->supports(HAL_DEVICE_CAP_HOST_ACCESSIBLE));
}

}  // namespace

namespace polyhal {

void revokePeerAccess(Device* device) {
    std::lock_guard lock(device->peersMutex);
    for (int ordinal : device->enabledPeers) {
        Device* peer = runtime().devices[ordinal].get();
        if (backendGrants(device, peer)) {
            device->vtable->deviceDisablePeerAccess(device->native, peer->native);
        }
    }
    device->enabledPeers.clear();
}

}  // namespace polyhal

extern "C" {

HAL_API halError halDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (halError e = requireOutput(canAccessPeer, op, "canAccessPeer")) {
            return e;
        }
        if (halError e = requireDevice(device, op)) return e;
        if (halError e = requireDevice(peerDevice, op)) return e;
        bool result = false;
        const char* why = nullptr;
        if (halError e = canAccess(runtime().devices[device].get(),
                                   runtime().devices[peerDevice].get(), &result, &why, op)) {
            return e;
        }
        *canAccessPeer = result ? 1 : 0;
        return HAL_SUCCESS;
    });
}

HAL_API halError halDeviceEnablePeerAccess(int peerDevice, uint32_t flags) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (flags != 0) {
            return fail(HAL_ERROR_INVALID_VALUE, "{}: flags must be 0 (got {:#x})", op, flags);
        }
        if (halError e = requireDevice(peerDevice, op)) return e;
        Device* device = currentDevice();
        Device* peer = runtime().devices[peerDevice].get();
        if (device == peer) {
            return fail(HAL_ERROR_INVALID_DEVICE,
                        "{}: device {} is the current device; a device "
                        "always accesses its own memory",
                        op, peerDevice);
        }
        bool possible = false;
        const char* why = nullptr;
        if (halError e = canAccess(device, peer, &possible, &why, op)) {
            return e;
        }
        if (!possible) {
            return fail(HAL_ERROR_NOT_SUPPORTED, "{}: device {} cannot access device {}: {}", op,
                        device->ordinal, peerDevice, why);
        }
        std::lock_guard lock(device->peersMutex);
        auto& peers = device->enabledPeers;
        if (std::find(peers.begin(), peers.end(), peerDevice) != peers.end()) return HAL_SUCCESS;
        if (backendGrants(device, peer)) {
            if (halError e =
                    checked(device->vtable->deviceEnablePeerAccess(device->native, peer->native),
                            device, op)) {
                return e;
            }
        }
        peers.push_back(peerDevice);
        return HAL_SUCCESS;
    });
}

HAL_API halError halDeviceDisablePeerAccess(int peerDevice) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (halError e = requireDevice(peerDevice, op)) return e;
        Device* device = currentDevice();
        Device* peer = runtime().devices[peerDevice].get();
        std::lock_guard lock(device->peersMutex);
        auto& peers = device->enabledPeers;
        const auto found = std::find(peers.begin(), peers.end(), peerDevice);
        if (found == peers.end()) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "{}: access from device {} to device {} is not enabled", op,
                        device->ordinal, peerDevice);
        }
        if (backendGrants(device, peer)) {
            if (halError e =
                    checked(device->vtable->deviceDisablePeerAccess(device->native, peer->native),
                            device, op)) {
                return e;
            }
        }
        peers.erase(found);
        return HAL_SUCCESS;
    });
}

}  // extern "C"
