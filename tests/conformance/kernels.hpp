// Finding and launching the conformance kernels of the selected backend.
//
// Each backend has a kernel folder holding its CTS kernel images (the kernels are listed in
// backends/cpu/cts_kernels/cts_kernels.c). The image holding kernel K for a backend whose image files
// end in .E is <folder>/K.E if it exists, else <folder>/cts_kernels.E. The folder of backend B
// is <root>/B for the first root that has it, the roots being
//   - the entries of POLYHAL_CTS_KERNEL_DIR (colon-separated), when it is set; otherwise
//   - <folder of polyhal-cts>/../share/polyhal/cts-kernels (an installed suite), then
//   - the build tree's kernel folders, fixed when the suite was built.
#ifndef POLYHAL_TESTS_CONFORMANCE_KERNELS_HPP_
#define POLYHAL_TESTS_CONFORMANCE_KERNELS_HPP_

#include <polyhal/hal.h>

#include <string>
#include <vector>

#include "cts.hpp"

namespace cts {

// The image holding `kernel` for the current device, looked for as <root>/<backend>/<kernel or
// cts_kernels>.<kind> for each module image kind the backend accepts
// (halDeviceProperties::moduleImageKinds), or "" with `searched` describing what was tried.
std::string findKernelImage(const std::string& kernel, std::string* searched);

// Loads the image holding CTS kernel `name` for the current device's backend into `module` and
// looks the kernel up. Returns false, after printing the skip reason, when the backend lacks
// HAL_DEVICE_CAP_KERNELS, has no CTS kernel image, or its image lacks `name`.
bool loadKernel(const char* name, Module& module, halFunction* function);

// One kernel argument referring to `value`, which must outlive the launch call.
template <typename T>
halKernelArg arg(const T& value) {
    return halKernelArg{&value, sizeof value};
}

// Launches `function` over a one-dimensional grid covering `n` elements in blocks of `block`.
halError launch1d(halFunction function, uint32_t n, uint32_t block,
                  const std::vector<halKernelArg>& args, halStream stream,
                  size_t dynamicSharedBytes = 0);

}  // namespace cts

#endif  // POLYHAL_TESTS_CONFORMANCE_KERNELS_HPP_
