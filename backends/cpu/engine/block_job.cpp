// Implements block_job.hpp.
#include "engine/block_job.hpp"

namespace polyhal::cpu {

namespace {

halDim3 blockIndex(uint64_t index, const halDim3& grid) {
    const uint64_t perSlice = uint64_t{grid.x} * grid.y;
    return halDim3{static_cast<uint32_t>(index % grid.x),
                   static_cast<uint32_t>(index % perSlice / grid.x),
                   static_cast<uint32_t>(index / perSlice)};
}

void recordFailure(BlockJob& job, BlockFailure::Kind kind, int value, const halDim3& block) {
    if (job.failureClaimed.exchange(true, std::memory_order_relaxed)) return;
    job.failure = BlockFailure{kind, value, block};
    job.failed.store(true, std::memory_order_release);
}

}  // namespace

void runBlock(BlockJob& job, uint64_t index, ScratchBuffer& scratch) {
    halCpuKernelContext context = job.context;
    context.blockIdx = blockIndex(index, context.gridDim);
    if (context.sharedMemoryBytes != 0) {
        context.sharedMemory = scratch.reserve(context.sharedMemoryBytes);
        if (context.sharedMemory == nullptr) {
            recordFailure(job, BlockFailure::Kind::kNoSharedMemory, 0, context.blockIdx);
            return;
        }
    }
    int result;
    try {
        result = job.kernel(&context);
    } catch (...) {
        // A kernel written in C++ must not unwind into the backend's threads.
        recordFailure(job, BlockFailure::Kind::kThrew, 0, context.blockIdx);
        return;
    }
    if (result != 0) {
        recordFailure(job, BlockFailure::Kind::kReturnedNonZero, result, context.blockIdx);
    }
}

}  // namespace polyhal::cpu
