// Runs a kernel launch command on the block pool and turns a failing block into a message.
#ifndef POLYHAL_CPU_KERNEL_EXECUTION_H_
#define POLYHAL_CPU_KERNEL_EXECUTION_H_

#include <optional>

#include "block_pool.h"
#include "command.h"
#include "scratch_buffer.h"
#include "timeline.h"

namespace polyhal::cpu {

// Runs every block of `launch` (on the calling worker and the pool's helpers) and returns the
// failure of the first block that failed, if any.
std::optional<Failure> executeKernel(KernelLaunch& launch, int priority, BlockPool& pool,
                                     ScratchBuffer& scratch);

}  // namespace polyhal::cpu

#endif  // POLYHAL_CPU_KERNEL_EXECUTION_H_
