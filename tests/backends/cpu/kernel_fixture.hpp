// The unit tests' kernel module (cpu_test_kernels.c), loaded once per test.
#ifndef POLYHAL_TESTS_BACKENDS_CPU_KERNEL_FIXTURE_HPP_
#define POLYHAL_TESTS_BACKENDS_CPU_KERNEL_FIXTURE_HPP_

#include <polyhal/plugin.h>

#include <vector>

namespace cpu_tests {

class KernelModule {
  public:
    KernelModule();
    ~KernelModule();
    KernelModule(const KernelModule&) = delete;
    KernelModule& operator=(const KernelModule&) = delete;

    halPluginModule get() const { return module_; }
    halPluginFunction function(const char* name) const;

  private:
    halPluginModule module_ = nullptr;
};

// The test module's bytes.
const std::vector<unsigned char>& testKernelImage();

}  // namespace cpu_tests

#endif  // POLYHAL_TESTS_BACKENDS_CPU_KERNEL_FIXTURE_HPP_
