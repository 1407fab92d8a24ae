// Devices: their properties, the current device, device-wide synchronisation.
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime.hpp"

using namespace polyhal::doubles;
using namespace polyhal::doubles::hip;

extern "C" {

// ---- Devices ----

hipError_t hipGetDeviceCount(int* count) {
    ENTER();
    *count = static_cast<int>(g_devices.size());
    return hipSuccess;
}

hipError_t hipDeviceGet(hipDevice_t* device, int ordinal) {
    ENTER();
    if (!validDevice(ordinal)) return hipErrorInvalidDevice;
    *device = ordinal;
    return hipSuccess;
}

hipError_t hipDeviceGetName(char* name, int length, hipDevice_t device) {
    ENTER();
    if (!validDevice(device)) return hipErrorInvalidDevice;
    if (name == nullptr || length <= 0) return hipErrorInvalidValue;
    std::snprintf(name, static_cast<size_t>(length), "polyhal HIP runtime double %d", device);
    return hipSuccess;
}

hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device) {
    ENTER();
    if (!validDevice(device)) return hipErrorInvalidDevice;
    *bytes = g_memory.heap(device).capacity();
    return hipSuccess;
}

hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attribute, int device) {
    ENTER();
    if (!validDevice(device)) return hipErrorInvalidDevice;
    switch (attribute) {
    case hipDeviceAttributeMultiprocessorCount: *value = 4; break;
    case hipDeviceAttributeMaxThreadsPerBlock: *value = kMaxThreadsPerBlock; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: *value = kMaxSharedMemory; break;
    case hipDeviceAttributeMemoryPoolsSupported: *value = 1; break;
    case hipDeviceAttributeManagedMemory: *value = 1; break;
    case hipDeviceAttributeMaxPitch: *value = kMaxPitch; break;
    default: return hipErrorInvalidValue;
    }
    return hipSuccess;
}

hipError_t hipGetDevice(int* device) {
    ENTER();
    *device = currentDevice();
    return hipSuccess;
}

hipError_t hipSetDevice(int device) {
    ENTER();
    if (!validDevice(device)) return hipErrorInvalidDevice;
    currentDevice() = device;
    return hipSuccess;
}

hipError_t hipDeviceCanAccessPeer(int* canAccess, int device, int peer) {
    ENTER();
    if (!validDevice(device) || !validDevice(peer)) return hipErrorInvalidDevice;
    *canAccess = device != peer;
    return hipSuccess;
}

// From the current device to `peer`'s memory; once.
hipError_t hipDeviceEnablePeerAccess(int peer, unsigned int flags) {
    ENTER();
    if (!validDevice(peer)) return hipErrorInvalidDevice;
    if (flags != 0) return hipErrorInvalidValue;
    if (peer == currentDevice()) return hipErrorInvalidDevice;
    Device& device = *g_devices[static_cast<size_t>(currentDevice())];
    std::lock_guard<std::mutex> lock(device.mutex);
    if (!device.peers.insert(peer).second) return hipErrorPeerAccessAlreadyEnabled;
    return hipSuccess;
}

hipError_t hipDeviceDisablePeerAccess(int peer) {
    ENTER();
    if (!validDevice(peer)) return hipErrorInvalidDevice;
    Device& device = *g_devices[static_cast<size_t>(currentDevice())];
    std::lock_guard<std::mutex> lock(device.mutex);
    if (device.peers.erase(peer) == 0) return hipErrorPeerAccessNotEnabled;
    return hipSuccess;
}

hipError_t hipDeviceGetStreamPriorityRange(int* least, int* greatest) {
    ENTER();
    if (least != nullptr) *least = kLeastPriority;
    if (greatest != nullptr) *greatest = kGreatestPriority;
    return hipSuccess;
}

hipError_t hipDeviceSynchronize() {
    ENTER();
    synchronizeDevice(currentDevice());
    return hipSuccess;
}

// "The state of current device is discarded and updated to a fresh state ... deletes all streams
// created, memory allocated, kernels running, events created" (hip_runtime_api.h): the handles
// die (using them afterwards is a breach).
hipError_t hipDeviceReset() {
    ENTER();
    const int ordinal = currentDevice();
    synchronizeDevice(ordinal);
    g_handles.removeIf([ordinal](const void* handle, const char* kind) {
        if (std::strcmp(kind, kStream) == 0) {
            return static_cast<const ihipStream_t*>(handle)->device == ordinal;
        }
        if (std::strcmp(kind, kEvent) == 0) {
            return static_cast<const ihipEvent_t*>(handle)->device == ordinal;
        }
        if (std::strcmp(kind, kModule) == 0) {
            return static_cast<const ihipModule_t*>(handle)->device == ordinal;
        }
        if (std::strcmp(kind, kFunction) == 0) {
            return static_cast<const ihipModuleSymbol_t*>(handle)->module->device == ordinal;
        }
        return false;
    });
    Device& device = *g_devices[static_cast<size_t>(ordinal)];
    std::vector<std::shared_ptr<ihipStream_t>> streams;
    {
        std::lock_guard<std::mutex> lock(device.mutex);
        streams.swap(device.streams);
        device.peers.clear();
    }
    streams.clear();  // they drain first
    g_memory.heap(ordinal).releaseAll();
    return hipSuccess;
}

}  // extern "C"
