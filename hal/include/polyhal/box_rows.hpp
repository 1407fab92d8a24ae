// The rows of a pitched box (halMemcpy3DParams, or any type with its pitch and extent members),
// walked in one place for the core and every plugin. A copy that cannot go as one box (no 3-D
// entry, a pitch above the vendor's limit, a row at a time into a graph) goes through this walk.
// Header-only, and needs nothing but hal.h.
#ifndef POLYHAL_BOX_ROWS_HPP_
#define POLYHAL_BOX_ROWS_HPP_

#include <polyhal/hal.h>

#include <cstddef>

namespace polyhal {

// Calls eachRow(dstOffset, srcOffset) for every row of `box`, slice after slice and row after row
// within a slice, with each row's byte offsets from the box's dst and src. Stops at the first call
// that does not return HAL_SUCCESS and returns its result.
template <class Box, class EachRow>
halError forEachBoxRow(const Box& box, const EachRow& eachRow) {
    for (size_t slice = 0; slice < box.depth; ++slice) {
        for (size_t row = 0; row < box.height; ++row) {
            const halError error = eachRow(slice * box.dstSlicePitch + row * box.dstPitch,
                                           slice * box.srcSlicePitch + row * box.srcPitch);
            if (error != HAL_SUCCESS) return error;
        }
    }
    return HAL_SUCCESS;
}

}  // namespace polyhal

#endif  // POLYHAL_BOX_ROWS_HPP_
