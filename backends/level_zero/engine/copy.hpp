// A copy a stream appends: `count` bytes (zeCommandListAppendMemoryCopy) or a box
// (zeCommandListAppendMemoryCopyRegion), given the signal and waits the stream chooses for it.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_COPY_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_COPY_HPP_

#include <level_zero/ze_api.h>
#include <polyhal/box_rows.hpp>
#include <polyhal/hal.h>

#include <cstddef>

namespace polyhal::level_zero {

class Copy {
  public:
    static Copy linear(void* dst, const void* src, size_t count);
    // `box` must fit a region (fitsRegion) and outlive the Copy.
    static Copy region(const halMemcpy3DParams& box);
    // Level Zero's region sizes and pitches are 32-bit.
    static bool fitsRegion(const halMemcpy3DParams& box);

    // The zeCommandListAppend* function append() calls.
    const char* call() const;
    ze_result_t append(ze_command_list_handle_t list, ze_event_handle_t signal,
                       uint32_t numWaitEvents, ze_event_handle_t* waitEvents) const;

  private:
    void* dst_ = nullptr;
    const void* src_ = nullptr;
    size_t count_ = 0;
    const halMemcpy3DParams* box_ = nullptr;  // set for a region
};

// The copies that make up `box`: one region where it fits (Copy::fitsRegion), else one linear
// copy per row. Calls each(copy) in order and stops at the first failure.
template <class Each>
halError forEachCopyOf(const halMemcpy3DParams& box, const Each& each) {
    if (Copy::fitsRegion(box)) return each(Copy::region(box));
    auto* dst = static_cast<unsigned char*>(box.dst);
    const auto* src = static_cast<const unsigned char*>(box.src);
    return forEachBoxRow(box, [&](size_t dstOffset, size_t srcOffset) {
        return each(Copy::linear(dst + dstOffset, src + srcOffset, box.width));
    });
}

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_COPY_HPP_
