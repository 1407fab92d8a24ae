// Peer access between two devices of the plugin, and a device's memory as the vendor reports it.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_PEER_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_PEER_HPP_

#include "gpu_common/current_device.hpp"
#include "gpu_common/objects.hpp"
#include "gpu_common/vendor_call.hpp"

namespace polyhal::gpu {

template <class Api>
halError deviceCanAccessPeer(halPluginDevice device, halPluginDevice peer,
                             int* canAccess) noexcept {
    return call<Api>(Api::symbols.peerAccessCan, canAccess, fromHandle<Api>(device)->native,
                     fromHandle<Api>(peer)->native);
}

// Lets kernels of `device` reach `peer`'s memory (CUDA: enabled in the device's context for the
// peer's context; HIP: from the current device to the peer's). An application may have enabled
// it already through the vendor API, as PyTorch does: that is not an error, and neither is
// disabling what it disabled meanwhile.
template <class Api>
halError setPeerAccess(halPluginDevice device, halPluginDevice peer, bool enable) noexcept {
    const Device<Api>& target = *fromHandle<Api>(peer);
    if (halError error = activate(target)) return error;
    const CurrentDevice<Api> current(*fromHandle<Api>(device));
    if (halError error = current.error()) return error;
    const auto& vendor = Api::symbols;
    const typename Api::Result result = enable
                                            ? vendor.peerAccessEnable.address(target.context, 0u)
                                            : vendor.peerAccessDisable.address(target.context);
    if (result == Api::kSuccess ||
        result == (enable ? Api::kPeerAccessAlreadyEnabled : Api::kPeerAccessNotEnabled)) {
        return HAL_SUCCESS;
    }
    return failCall<Api>(Api::toHalError(result), result,
                         enable ? vendor.peerAccessEnable.name : vendor.peerAccessDisable.name);
}

template <class Api>
halError deviceEnablePeerAccess(halPluginDevice device, halPluginDevice peer) noexcept {
    return setPeerAccess<Api>(device, peer, true);
}

template <class Api>
halError deviceDisablePeerAccess(halPluginDevice device, halPluginDevice peer) noexcept {
    return setPeerAccess<Api>(device, peer, false);
}

// Free and total bytes as the vendor counts them (other processes' memory included).
template <class Api>
halError memGetInfo(halPluginDevice device, size_t* freeBytes, size_t* totalBytes) noexcept {
    const CurrentDevice<Api> current(*fromHandle<Api>(device));
    if (halError error = current.error()) return error;
    return call<Api>(Api::symbols.memGetInfo, freeBytes, totalBytes);
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_PEER_HPP_
