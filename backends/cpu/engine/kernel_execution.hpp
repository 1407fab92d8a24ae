// Runs a kernel launch command on the block pool and turns a failing block into a message.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_KERNEL_EXECUTION_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_KERNEL_EXECUTION_HPP_

#include <optional>

#include "engine/block_pool.hpp"
#include "engine/command.hpp"
#include "engine/scratch_buffer.hpp"
#include "engine/timeline.hpp"

namespace polyhal::cpu {

// Runs every block of `launch` (on the calling worker and the pool's helpers) and returns the
// failure of the first block that failed, if any.
std::optional<Failure> executeKernel(KernelLaunch& launch, int priority, BlockPool& pool,
                                     ScratchBuffer& scratch);

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_KERNEL_EXECUTION_HPP_
