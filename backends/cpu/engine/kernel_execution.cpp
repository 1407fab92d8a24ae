// Implements kernel_execution.hpp.
#include "engine/kernel_execution.hpp"

#include "engine/block_job.hpp"
#include "module.hpp"

namespace polyhal::cpu {

std::optional<Failure> executeKernel(KernelLaunch& launch, int priority, BlockPool& pool,
                                     ScratchBuffer& scratch) {
    BlockJob job;
    job.kernel = launch.function->entry;
    job.context.size = sizeof(halCpuKernelContext);
    job.context.gridDim = launch.grid;
    job.context.blockDim = launch.block;
    job.context.sharedMemoryBytes = launch.sharedBytes;
    job.context.args = launch.args.values();
    job.context.argSizes = launch.args.sizes();
    job.context.numArgs = launch.args.count();
    job.blockCount = uint64_t{launch.grid.x} * launch.grid.y * launch.grid.z;  // checked at launch
    job.priority = priority;

    pool.run(job, scratch);
    if (!job.failed.load(std::memory_order_acquire)) return std::nullopt;

    const char* name = launch.function->name.c_str();
    const halDim3& block = job.failure.block;
    switch (job.failure.kind) {
    case BlockFailure::Kind::kReturnedNonZero:
        return makeFailure(HAL_ERROR_LAUNCH_FAILED, "kernel '%s' returned %d in block (%u, %u, %u)",
                           name, job.failure.value, block.x, block.y, block.z);
    case BlockFailure::Kind::kThrew:
        return makeFailure(HAL_ERROR_LAUNCH_FAILED,
                           "kernel '%s' threw a C++ exception in block (%u, %u, %u)", name, block.x,
                           block.y, block.z);
    case BlockFailure::Kind::kNoSharedMemory:
        return makeFailure(HAL_ERROR_LAUNCH_FAILED,
                           "kernel '%s': no host memory for the %zu bytes of shared memory of "
                           "block (%u, %u, %u)",
                           name, launch.sharedBytes, block.x, block.y, block.z);
    }
    return std::nullopt;
}

}  // namespace polyhal::cpu
