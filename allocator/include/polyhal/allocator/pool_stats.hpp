// Statistics and tunable attributes of a device pool.
#ifndef POLYHAL_ALLOCATOR_POOL_STATS_HPP_
#define POLYHAL_ALLOCATOR_POOL_STATS_HPP_

#include <cstdint>

namespace polyhal::allocator {

struct PoolStats {
    uint64_t bytesInUse = 0;  // bytes of blocks handed out (sizes rounded to 512 B)
    uint64_t peakBytesInUse = 0;
    uint64_t bytesReserved = 0;  // bytes of segments obtained from the backend
    uint64_t peakBytesReserved = 0;
    uint64_t bytesCached = 0;   // reserved but not in use: free blocks, pending included
    uint64_t bytesPending = 0;  // free blocks still waiting for a use on another stream

    // How each successful allocation was served (see the reuse order in docs/pool.md).
    uint64_t reusedSameStream = 0;        // 1: no use on another stream to wait for
    uint64_t reusedProvenOrder = 0;       // 2: every foreign use ordered before, by events
    uint64_t reusedObservedComplete = 0;  // 3: every foreign use seen finished by the host
    uint64_t newSegments = 0;             // 4: carved from a segment just obtained
    uint64_t oomSynchronized = 0;         // 5: served only after synchronising and releasing

    uint64_t backendAllocations = 0;  // allocateMemory calls that succeeded
    uint64_t backendFrees = 0;        // freeMemory calls
};

struct PoolAttributes {
    // Reserved bytes above which the pool returns fully free segments to the backend when the
    // host synchronises (like cudaMemPoolAttrReleaseThreshold). Default: keep everything.
    uint64_t releaseThreshold = UINT64_MAX;
    // Reuse blocks whose foreign uses are ordered before the allocating stream by events.
    bool reuseProvenOrder = true;
    // Reuse blocks whose foreign uses the host has observed finished (pool events, queries and
    // synchronisations).
    bool reuseObservedCompletion = true;
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_POOL_STATS_HPP_
