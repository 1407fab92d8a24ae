// Modules: host shared objects loaded from memory; their exported functions are the kernels.
#ifndef POLYHAL_BACKENDS_CPU_MODULE_HPP_
#define POLYHAL_BACKENDS_CPU_MODULE_HPP_

#include <polyhal/cpu_kernel.h>
#include <polyhal/plugin.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/command.hpp"
#include "engine/elf_dynamic.hpp"

namespace polyhal::cpu {

struct Function {
    using Handle = halPluginFunction;
    halCpuKernelFn entry;
    std::string name;  // for failure messages
    // The sizes of its parameters where the module declares them (HAL_CPU_KERNEL_PARAMS), a
    // launch's arguments checked against them; nullopt for an undeclared kernel.
    std::optional<std::vector<size_t>> parameters;

    // HAL_ERROR_INVALID_VALUE, with the kernel and the first argument that differs, unless
    // `args` match the declared parameters (or none are declared).
    halError checkArguments(const halKernelArg* args, uint32_t numArgs) const;
};

class Module {
  public:
    using Handle = halPluginModule;

    // Loads the shared object whose bytes are `image` (copied). A bad image:
    // HAL_ERROR_INVALID_IMAGE with the reason (dlerror's text when the dynamic loader refused
    // it). Throws std::bad_alloc.
    static halError load(const void* image, size_t size, std::unique_ptr<Module>& module);
    ~Module();
    Module(const Module&) = delete;
    Module& operator=(const Module&) = delete;

    // The kernel exported as `name`, the same object for every lookup of that name; unknown,
    // or a symbol that is not a function (data, TLS): HAL_ERROR_NOT_FOUND. Throws
    // std::bad_alloc.
    halError function(const char* name, Function*& function);

  private:
    Module(int file, void* library, const ElfSymbolTable& symbols)
        : file_(file), library_(library), symbols_(symbols) {}

    // The ELF type (STT_FUNC, STT_OBJECT...) of the symbol the module defines as `name`, or -1.
    int symbolType(const char* name) const;

    // The parameter sizes the module declares for kernel `kernel` (its exported
    // hal_cpu_params_<kernel>, HAL_CPU_KERNEL_PARAMS), or nullopt where it declares none.
    std::optional<std::vector<size_t>> declaredParameters(const std::string& kernel) const;

    // The in-memory file the library was loaded from. It stays open while the library is
    // loaded: the loader knows the library by its "/proc/self/fd/N" name, and a reused N would
    // make a later dlopen return this library instead of loading the new one.
    const int file_;
    void* const library_;
    const ElfSymbolTable symbols_;  // checked before the library was loaded
    std::mutex mutex_;
    std::unordered_map<std::string, std::unique_ptr<Function>> functions_;
};

// Checks a launch as launchKernel does and fills `launch` (its arguments copied). Throws
// std::bad_alloc.
halError makeKernelLaunch(halPluginFunction function, halDim3 grid, halDim3 block,
                          size_t dynamicSharedBytes, const halKernelArg* args, uint32_t numArgs,
                          KernelLaunch* launch);

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_MODULE_HPP_
