// Platform entries. With a real runtime, initialize() would load the vendor library (dlopen, so
// the plugin loads even where the driver is missing) and enumerate its devices.
#include <unistd.h>

#include "device.hpp"
#include "entries.hpp"

namespace polyhal_template {

uint64_t physicalMemory() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGESIZE);
    return pages > 0 && pageSize > 0 ? static_cast<uint64_t>(pages) * pageSize : 0;
}

// A runtime without a driver or a device returns HAL_ERROR_NO_DEVICE here, with its own message:
// fail(HAL_ERROR_NO_DEVICE, "cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device)").
halError initialize() {
    if (physicalMemory() == 0) {
        return fail(HAL_ERROR_NO_DEVICE, "sysconf: cannot read the memory size");
    }
    polyhal::plugin::log(HAL_LOG_INFO, "template: one device, host memory and host threads");
    return HAL_SUCCESS;
}

halError deviceGetCount(int* count) {
    *count = 1;
    return HAL_SUCCESS;
}

// What polyhal asks of the backend before starting it. A plugin with a selection priority is
// chosen automatically (POLYHAL_BACKEND unset) once installed in a plugin folder, ahead of the
// built-in CPU backend: the template says 50 so that its SDK check shows this. Choose yours: a
// real accelerator picks a value in the hundreds (polyhal's CUDA backend says 300), a backend
// that should be used only when named says 0. The template's memory is host memory, which
// DLPack calls kDLCPU.
halError backendGetInfo(halPluginBackendInfo* info) {
    // Kernels come as tasm images (engine/kernel_image.hpp); a GPU backend names its binary
    // and intermediate kinds here, preferred first ("cubin,ptx").
    return polyhal::plugin::describeBackend(info, 50, 1 /* kDLCPU */, "tasm");
}

}  // namespace polyhal_template
