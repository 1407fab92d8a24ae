// Appending a linear or region copy to a command list.
#include "engine/copy.hpp"

#include <cstdint>
#include <limits>

#include "symbols.hpp"

namespace polyhal::level_zero {
namespace {

bool fits32(size_t value) {
    return value <= std::numeric_limits<uint32_t>::max();
}

// A slice pitch for Level Zero: halMemcpy3D ignores it for one slice, where it may be anything.
size_t slicePitch(const halMemcpy3DParams& box, size_t pitch, size_t given) {
    return box.depth == 1 ? pitch * box.height : given;
}

}  // namespace

Copy Copy::linear(void* dst, const void* src, size_t count) {
    Copy copy;
    copy.dst_ = dst;
    copy.src_ = src;
    copy.count_ = count;
    return copy;
}

Copy Copy::region(const halMemcpy3DParams& box) {
    Copy copy;
    copy.dst_ = box.dst;
    copy.src_ = box.src;
    copy.box_ = &box;
    return copy;
}

bool Copy::fitsRegion(const halMemcpy3DParams& box) {
    size_t dstSlice = 0, srcSlice = 0;
    return fits32(box.width) && fits32(box.height) && fits32(box.depth) && fits32(box.dstPitch) &&
           fits32(box.srcPitch) && !__builtin_mul_overflow(box.dstPitch, box.height, &dstSlice) &&
           !__builtin_mul_overflow(box.srcPitch, box.height, &srcSlice) &&
           fits32(slicePitch(box, box.dstPitch, box.dstSlicePitch)) &&
           fits32(slicePitch(box, box.srcPitch, box.srcSlicePitch));
}

const char* Copy::call() const {
    return box_ != nullptr ? "zeCommandListAppendMemoryCopyRegion"
                           : "zeCommandListAppendMemoryCopy";
}

ze_result_t Copy::append(ze_command_list_handle_t list, ze_event_handle_t signal,
                         uint32_t numWaitEvents, ze_event_handle_t* waitEvents) const {
    if (box_ == nullptr) {
        return ze.zeCommandListAppendMemoryCopy.address(list, dst_, src_, count_, signal,
                                                        numWaitEvents, waitEvents);
    }
    const halMemcpy3DParams& box = *box_;
    // Both regions start at the pointers themselves; widths are in bytes.
    const ze_copy_region_t extent{0,
                                  0,
                                  0,
                                  static_cast<uint32_t>(box.width),
                                  static_cast<uint32_t>(box.height),
                                  static_cast<uint32_t>(box.depth)};
    return ze.zeCommandListAppendMemoryCopyRegion.address(
        list, dst_, &extent, static_cast<uint32_t>(box.dstPitch),
        static_cast<uint32_t>(slicePitch(box, box.dstPitch, box.dstSlicePitch)), src_, &extent,
        static_cast<uint32_t>(box.srcPitch),
        static_cast<uint32_t>(slicePitch(box, box.srcPitch, box.srcSlicePitch)), signal,
        numWaitEvents, waitEvents);
}

}  // namespace polyhal::level_zero
