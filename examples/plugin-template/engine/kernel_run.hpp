// Running a launch of a tasm kernel: the template device's execution units. A real device runs
// its threads itself; with a vendor runtime this file goes away.
#ifndef POLYHAL_TEMPLATE_ENGINE_KERNEL_RUN_HPP_
#define POLYHAL_TEMPLATE_ENGINE_KERNEL_RUN_HPP_

#include <polyhal/plugin.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/kernel_image.hpp"

namespace polyhal_template {

struct Launch {
    halDim3 grid{};
    halDim3 block{};
    size_t sharedBytes = 0;           // dynamic shared memory of each block, zero-filled
    std::vector<uint64_t> arguments;  // each zero-extended to 64 bits
};

// Whether [address, address + bytes) lies within device memory the kernel may touch.
using DeviceMemoryCheck = std::function<bool(uint64_t address, uint64_t bytes)>;

// Each thread may run this many instructions; one that runs more fails the launch, so that an
// endless loop in an image cannot hold its stream forever.
constexpr uint64_t kInstructionBudget = uint64_t{1} << 26;

// Runs every block of `launch`, one after another, and the threads of a block in turns from one
// barrier to the next. Returns "" when every thread ended, else what faulted, where: a trap, an
// access outside device memory (`inDeviceMemory`) or the block's shared memory, a misaligned
// access, or an exhausted budget. The first fault ends the launch, as on a GPU.
std::string runKernel(const Kernel& kernel, const Launch& launch,
                      const DeviceMemoryCheck& inDeviceMemory);

}  // namespace polyhal_template

#endif  // POLYHAL_TEMPLATE_ENGINE_KERNEL_RUN_HPP_
