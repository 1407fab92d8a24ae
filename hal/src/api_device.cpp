// Setup and devices: halInit, versions, device selection, properties, reset, synchronisation.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "api_host_memory.hpp"
#include "graph/capture.hpp"
#include "stream_ops.hpp"

using namespace polyhal;

namespace {

// DLPack's kDLCPU: memory the host addresses directly.
constexpr int32_t kDLPackCpu = 1;

// Destroys every object of `device`; halResetDevice's second half.
void releaseDeviceObjects(Device* device) {
    Runtime& rt = runtime();
    const halPluginDispatchTable& vt = *device->vtable;
    // Graphs first: their bodies give their graph-owned blocks back to the pool (and forget
    // them as graph-owned) before the pool is reset, and their `finished` events go with the
    // plugin objects they belong to.
    rt.graphs.forEachLive([&](halGraph_t* graph) {
        if (graph->device == device) destroyGraph(graph, "halResetDevice");
    });
    rt.functions.forEachLive([&](halFunction_t* function) {
        if (function->device == device) rt.functions.destroy(function);
    });
    rt.modules.forEachLive([&](halModule_t* module) {
        if (module->device != device) return;
        vt.moduleUnload(module->native);
        check::destroyed(module);
        rt.modules.destroy(module);
    });
    rt.events.forEachLive([&](halEvent_t* event) {
        if (event->device != device) return;
        vt.eventDestroy(event->native);
        check::destroyed(event);
        rt.events.destroy(event);
    });
    rt.streams.forEachLive([&](halStream_t* stream) {
        if (stream->device == device) releaseStream(stream);
    });
    releaseDefaultStream(device);
    device->pool->reset();
    for (const AddressRange& imported : rt.ipcImports.eraseDevice(device)) {
        vt.ipcMemCloseHandle(device->native, imported.mapping);
    }
    // Pinned memory belongs to the vendor context it was made in, which the reset destroys.
    for (const AddressRange& pinned : rt.hostAllocations.eraseDevice(device)) {
        void* base = reinterpret_cast<void*>(pinned.base);
        check::freed(nullptr, base, "halResetDevice");
        if (vt.memFreeHost != nullptr) {
            vt.memFreeHost(device->native, base);
        } else {
            std::free(base);
        }
    }
    releaseHostMemory(device);
}

}  // namespace

extern "C" {

HAL_API halError halInit(void) {
    return apiCall(__func__, CallPolicy::kHostOnly, [] { return HAL_SUCCESS; });
}

HAL_API halError halGetVersion(int* major, int* minor, int* patch) {
    if (major != nullptr) *major = HAL_VERSION_MAJOR;
    if (minor != nullptr) *minor = HAL_VERSION_MINOR;
    if (patch != nullptr) *patch = HAL_VERSION_PATCH;
    return HAL_SUCCESS;
}

HAL_API halError halGetBackendName(const char** name) {
    return hostGetter(__func__, name, "name",
                      [] { return currentDevice()->backend->name.c_str(); });
}

HAL_API halError halGetDeviceCount(int* count) {
    return hostGetter(__func__, count, "count",
                      [] { return static_cast<int>(runtime().devices.size()); });
}

HAL_API halError halSetDevice(int device) {
    return apiCall(__func__, CallPolicy::kHostOnly, [&, op = __func__] {
        if (halError e = requireDevice(device, op)) return e;
        currentDeviceOrdinal() = device;
        return HAL_SUCCESS;
    });
}

HAL_API halError halGetDevice(int* device) {
    return hostGetter(__func__, device, "device", [] { return currentDeviceOrdinal(); });
}

HAL_API halError halResetDevice(int ordinal) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        if (halError e = requireDevice(ordinal, op)) return e;
        Device* device = runtime().devices[ordinal].get();
        // A capture holds streams, events and memory of the device; the reset would leave it
        // pointing at released objects and never ending.
        if (halError e = refuseIfDeviceCaptured(device, op)) return e;
        const halError drained = synchronizeDevice(device, op);
        releaseDeviceObjects(device);
        revokePeerAccess(device);  // as cudaDeviceReset ends the context's peer mappings
        // Last, the vendor's own state: a CUDA context a fault poisoned is usable again.
        const halError reset =
            device->vtable->deviceReset != nullptr
                ? checked(device->vtable->deviceReset(device->native), device, op)
                : HAL_SUCCESS;
        std::optional<DeferredFailure> failure = device->deferredFailures.takeOldest();
        // The reset clears the device's other unreported failures, with the work they belong to.
        const size_t cleared = device->deferredFailures.clear();
        if (failure && cleared > 0) {
            failure->message += fmt::format(
                " (and {} later asynchronous failure(s) of this device's work, cleared by the "
                "reset)",
                cleared);
        }
        return reportDeferred(std::move(failure), drained != HAL_SUCCESS ? drained : reset);
    });
}

HAL_API halError halGetDeviceProperties(int ordinal, halDeviceProperties* props) {
    return apiCall(__func__, CallPolicy::kHostOnly, [&, op = __func__] {
        if (halError e = requireOutput(props, op, "props")) return e;
        const size_t minimum = offsetof(halDeviceProperties, name) + sizeof(props->name);
        if (props->size < minimum) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "{}: props->size is {}; set it to sizeof(halDeviceProperties) ({})", op,
                        props->size, sizeof(halDeviceProperties));
        }
        if (halError e = requireDevice(ordinal, op)) return e;
        const Device& device = *runtime().devices[ordinal];
        halDeviceProperties full{};
        full.size = sizeof(full);
        std::snprintf(full.name, sizeof full.name, "%s", device.info.name);
        std::snprintf(full.backend, sizeof full.backend, "%s", device.backend->name.c_str());
        full.ordinal = device.ordinal;
        full.backendOrdinal = device.backendOrdinal;
        full.totalMemory = device.info.totalMemory;
        full.computeUnits = device.info.computeUnits;
        full.maxThreadsPerBlock = device.info.maxThreadsPerBlock;
        full.maxSharedMemoryPerBlock = device.info.maxSharedMemoryPerBlock;
        full.capabilities = device.info.capabilities;
        full.maxKernelArgumentBytes = device.info.maxKernelArgumentBytes;
        const halPluginBackendInfo& backend = device.backend->info;
        full.dlpackDeviceType = (full.capabilities & HAL_DEVICE_CAP_HOST_ACCESSIBLE) != 0
                                    ? kDLPackCpu
                                    : backend.dlpackDeviceType;
        if ((full.capabilities & HAL_DEVICE_CAP_KERNELS) != 0 &&
            backend.moduleImageKinds != nullptr) {
            std::snprintf(full.moduleImageKinds, sizeof full.moduleImageKinds, "%s",
                          backend.moduleImageKinds);
        }
        const size_t size = std::min(props->size, sizeof(full));
        std::memcpy(props, &full, size);
        props->size = size;
        return HAL_SUCCESS;
    });
}

HAL_API halError halSynchronizeDevice(void) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [op = __func__] {
        Device* device = currentDevice();
        if (halError e = refuseIfDeviceCaptured(device, op)) return e;
        trace::notePool(device);
        const halError status = synchronizeDevice(device, op);
        if (status == HAL_SUCCESS) trace::deviceSynchronized(device);
        return reportDeferred(device->deferredFailures.takeOldest(), status);
    });
}

}  // extern "C"
