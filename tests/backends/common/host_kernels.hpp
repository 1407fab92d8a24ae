// The kernels a double can run: host builds of the conformance kernels
// (backends/cpu/cts_kernels/cts_kernels.c), each with the parameter list its device build declares,
// keyed by name. A device image (PTX, cubin, fatbin, code object) is accepted and recorded, and
// a kernel it names runs through the host build of the same name.
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_HOST_KERNELS_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_HOST_KERNELS_HPP_

#include <polyhal/cpu_kernel.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "address_space.hpp"

namespace polyhal::doubles {

struct KernelParameter {
    size_t size;
    bool isPointer;  // a device address the kernel dereferences
};

struct HostKernel {
    const char* name;
    halCpuKernelFn run;
    std::vector<KernelParameter> parameters;
    size_t offset(size_t index) const;  // of parameter `index` in the packed parameter buffer
};

// Whether `image` starts with the ELF magic, and, for the vendors' loaders, which take no size,
// its length: up to the end of its section header table.
bool isElfImage(const unsigned char* image);
size_t elfImageLength(const unsigned char* image);

// The host build of kernel `name`, or nullptr.
const HostKernel* findHostKernel(const char* name);

// Reads the parameters `kernel` declares from the vendor's kernelParams array (each at its
// declared size) and turns each pointer into the address the double touches. A pointer must hold
// memory of a device the launch reaches (its own, or a peer whose access was enabled),
// page-locked host memory or null. Returns "" or what is wrong.
std::string packArguments(const HostKernel& kernel, void* const* params, const AddressSpace& memory,
                          const std::function<bool(int device)>& reaches,
                          std::vector<std::vector<unsigned char>>* arguments);

// One launch, run block by block on the calling thread. `arguments[i]` holds parameter i's
// bytes, pointers already turned into addresses the host may touch. Returns the first non-zero
// value a block returned (the launch failed), else 0.
int runHostKernel(const HostKernel& kernel, halDim3 grid, halDim3 block, size_t sharedBytes,
                  const std::vector<std::vector<unsigned char>>& arguments);

// A launch as checked and packed at the call: its arguments are copied then, so that an eager
// launch or a graph's kernel node never reads the caller's storage again.
struct KernelRun {
    const HostKernel* kernel;
    halDim3 grid;
    halDim3 block;
    size_t sharedBytes;
    std::vector<std::vector<unsigned char>> arguments;
    std::function<void()> fault;  // what a failed block does (the vendor's sticky error)
    void execute() const {
        if (runHostKernel(*kernel, grid, block, sharedBytes, arguments) != 0) fault();
    }
};

// A grid and a block both vendors accept: no zero extent, at most `maxThreads` per block.
inline bool validLaunchShape(halDim3 grid, halDim3 block, unsigned maxThreads) {
    return grid.x != 0 && grid.y != 0 && grid.z != 0 && block.x != 0 && block.y != 0 &&
           block.z != 0 && uint64_t{block.x} * block.y * block.z <= maxThreads;
}

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_HOST_KERNELS_HPP_
