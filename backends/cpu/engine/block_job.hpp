// One kernel launch being executed: its blocks are claimed one at a time by whichever threads
// work on it (the launching stream's worker and block pool helpers).
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_BLOCK_JOB_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_BLOCK_JOB_HPP_

#include <polyhal/cpu_kernel.h>

#include <atomic>
#include <cstdint>

#include "engine/scratch_buffer.hpp"

namespace polyhal::cpu {

struct BlockFailure {
    enum class Kind { kReturnedNonZero, kThrew, kNoSharedMemory };
    Kind kind = Kind::kReturnedNonZero;
    int value = 0;  // what the kernel returned
    halDim3 block = {0, 0, 0};
};

struct BlockJob {
    halCpuKernelFn kernel = nullptr;
    // The context every block sees; blockIdx and sharedMemory are filled per block.
    halCpuKernelContext context = {};
    uint64_t blockCount = 0;
    int priority = 0;

    std::atomic<uint64_t> nextBlock{0};
    // Pool helpers currently inside this job; the launching thread waits for zero.
    std::atomic<uint32_t> activeHelpers{0};
    std::atomic<bool> failed{false};
    std::atomic<bool> failureClaimed{false};
    BlockFailure failure;  // written by the thread that claimed it, read after the job ends

    // No block is left to start: all were claimed, or one failed and the rest are skipped.
    bool exhausted() const {
        return failed.load(std::memory_order_relaxed) ||
               nextBlock.load(std::memory_order_relaxed) >= blockCount;
    }
};

// Runs block number `index` (x fastest, then y, then z) of `job`, with its shared memory taken
// from `scratch`. A failure is recorded in the job; only the first one is kept.
void runBlock(BlockJob& job, uint64_t index, ScratchBuffer& scratch);

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_BLOCK_JOB_HPP_
