// The widest pitch a vendor's pitched copy takes: cuMemcpy2DAsync, cuMemcpy3D, hipMemcpy2DAsync
// and their graph nodes refuse a pitch above the device's maximum (CU_DEVICE_ATTRIBUTE_MAX_PITCH,
// hipDeviceAttributeMaxPitch; 2^31 - 1 bytes on current GPUs), where a 1-D copy has no bound.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_ENGINE_MAX_PITCH_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_ENGINE_MAX_PITCH_HPP_

#include <climits>
#include <cstddef>

#include "gpu_common/engine/objects.hpp"
#include "gpu_common/engine/vendor_call.hpp"

namespace polyhal::gpu {

// Every device takes pitches up to this (no GPU has a smaller maximum): a copy within it needs
// no query.
constexpr size_t kPitchEveryDeviceTakes = size_t{1} << 20;

template <class Api>
halError maxCopyPitch(const Device<Api>& device, size_t* pitch) noexcept {
    int maxPitch = 0;
    if (halError error = call<Api>(Api::symbols.deviceGetAttribute, &maxPitch,
                                   Api::kAttributeMaxPitch, device.native)) {
        return error;
    }
    // Older ROCm releases narrow a 64-bit pitch into the int: a value below the smallest any
    // GPU has means no bound below int's.
    *pitch = static_cast<size_t>(maxPitch) >= kPitchEveryDeviceTakes ? static_cast<size_t>(maxPitch)
                                                                     : size_t{INT_MAX};
    return HAL_SUCCESS;
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_ENGINE_MAX_PITCH_HPP_
