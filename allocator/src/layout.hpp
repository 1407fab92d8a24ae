// Sizes: rounding, the small/large split and how large a segment to ask the backend for.
#ifndef POLYHAL_ALLOCATOR_LAYOUT_HPP_
#define POLYHAL_ALLOCATOR_LAYOUT_HPP_

#include <cstddef>

namespace polyhal::allocator::layout {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

// Every block size is a multiple of the granule; so is every block address within a segment.
constexpr size_t kGranule = 512;
// Requests up to this size come from small segments, larger ones from large segments, so small
// blocks never fragment the memory large requests need.
constexpr size_t kSmallLimit = 1 * kMiB;
constexpr size_t kSmallSegment = 2 * kMiB;
// Requests below kLargeShared share 20 MiB segments; larger ones get a segment of their own,
// rounded up to kSegmentGranularity.
constexpr size_t kLargeShared = 10 * kMiB;
constexpr size_t kLargeSegment = 20 * kMiB;
constexpr size_t kSegmentGranularity = 2 * kMiB;
// Largest request the pool accepts (rounding must not overflow).
constexpr size_t kMaxRequest = ~size_t{0} - kLargeSegment;

constexpr size_t roundUp(size_t value, size_t multiple) {
    return (value + multiple - 1) / multiple * multiple;
}

constexpr size_t roundRequest(size_t size) {
    return roundUp(size, kGranule);
}

constexpr bool isSmall(size_t rounded) {
    return rounded <= kSmallLimit;
}

// The segment to request when no cached block fits.
constexpr size_t segmentSizeFor(size_t rounded) {
    if (isSmall(rounded)) return kSmallSegment;
    if (rounded < kLargeShared) return kLargeSegment;
    return roundUp(rounded, kSegmentGranularity);
}

// The smallest segment that serves the request: the last attempt before out of memory.
constexpr size_t minimalSegmentSizeFor(size_t rounded) {
    return isSmall(rounded) ? kSmallSegment : roundUp(rounded, kSegmentGranularity);
}

// Whether a free block is split when it serves a request, leaving `remaining` bytes. Large
// blocks keep slivers of up to 1 MiB rather than create pieces no large request could use.
constexpr bool shouldSplit(bool smallSegment, size_t remaining) {
    return smallSegment ? remaining >= kGranule : remaining > kSmallLimit;
}

}  // namespace polyhal::allocator::layout

#endif  // POLYHAL_ALLOCATOR_LAYOUT_HPP_
