// Module entries: kernels from shared objects loaded from memory, and their launches.
#include "module.hpp"

#include <polyhal/plugin_support.hpp>

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "engine/elf_image.hpp"
#include "entries.hpp"
#include "stream.hpp"

namespace polyhal::cpu {

namespace {

halError systemFailure(const char* call, int error) {
    const bool exhausted = error == ENOMEM || error == ENOSPC;
    return plugin::fail(exhausted ? HAL_ERROR_OUT_OF_MEMORY : HAL_ERROR_BACKEND, "%s: %s", call,
                        std::strerror(error));
}

bool writeAll(int file, const unsigned char* bytes, size_t size) {
    while (size > 0) {
        const ssize_t written = write(file, bytes, size);
        if (written < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        bytes += written;
        size -= static_cast<size_t>(written);
    }
    return true;
}

// Is `symbol` defined by `library` itself, not by a library it depends on (dlsym searches
// those too, so "malloc" would otherwise pass for a kernel)?
bool definedIn(void* library, void* symbol) {
    link_map* owner = nullptr;
    link_map* self = nullptr;
    Dl_info info;
    return dladdr1(symbol, &info, reinterpret_cast<void**>(&owner), RTLD_DL_LINKMAP) != 0 &&
           dlinfo(library, RTLD_DI_LINKMAP, &self) == 0 && owner == self;
}

// What a symbol of ELF type `type` is, for a message.
const char* symbolKind(int type) {
    switch (type) {
    case STT_NOTYPE: return "a symbol without a type (STT_NOTYPE; mark it .type @function)";
    case STT_OBJECT: return "a data object (STT_OBJECT)";
    case STT_COMMON: return "a common data object (STT_COMMON)";
    case STT_TLS: return "a thread-local variable (STT_TLS)";
    case STT_SECTION: return "a section (STT_SECTION)";
    case STT_FILE: return "a file name (STT_FILE)";
    default: return "a symbol of a processor- or OS-specific type";
    }
}

}  // namespace

halError Module::load(const void* image, size_t size, std::unique_ptr<Module>& module) {
    ElfSymbolTable symbols;
    if (const char* problem =
            elfImageProblem(static_cast<const unsigned char*>(image), size, &symbols)) {
        return plugin::fail(HAL_ERROR_INVALID_IMAGE, "%s", problem);
    }
    const int file = memfd_create("polyhal-cpu-module", MFD_CLOEXEC);
    if (file < 0) return systemFailure("memfd_create", errno);
    if (!writeAll(file, static_cast<const unsigned char*>(image), size)) {
        const int error = errno;
        close(file);
        return systemFailure("writing the module image to its memory file", error);
    }
    char path[32];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", file);
    void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        const char* reason = dlerror();
        close(file);
        return plugin::fail(HAL_ERROR_INVALID_IMAGE, "the dynamic loader refused the module: %s",
                            reason != nullptr ? reason : "no reason given");
    }
    try {
        module.reset(new Module(file, library, symbols));
    } catch (...) {
        dlclose(library);
        close(file);
        throw;
    }
    return HAL_SUCCESS;
}

Module::~Module() {
    dlclose(library_);
    close(file_);
}

int Module::symbolType(const char* name) const {
    link_map* map = nullptr;
    if (dlinfo(library_, RTLD_DI_LINKMAP, &map) != 0) return -1;
    // The image check placed the tables inside the library's readable segments, not at aligned
    // addresses: the symbols are copied out.
    const auto* table = reinterpret_cast<const unsigned char*>(map->l_addr + symbols_.symbols);
    const auto* strings = reinterpret_cast<const char*>(map->l_addr + symbols_.strings);
    for (size_t i = 0; i < symbols_.count; ++i) {
        ElfW(Sym) symbol;
        std::memcpy(&symbol, table + i * sizeof symbol, sizeof symbol);
        if (symbol.st_shndx != SHN_UNDEF && ELF64_ST_BIND(symbol.st_info) != STB_LOCAL &&
            std::strcmp(strings + symbol.st_name, name) == 0) {
            return ELF64_ST_TYPE(symbol.st_info);
        }
    }
    return -1;
}

std::optional<std::vector<size_t>> Module::declaredParameters(const std::string& kernel) const {
    const std::string name = "hal_cpu_params_" + kernel;
    if (symbolType(name.c_str()) != STT_OBJECT) return std::nullopt;
    void* symbol = dlsym(library_, name.c_str());
    if (symbol == nullptr || !definedIn(library_, symbol)) return std::nullopt;
    const auto* declared = static_cast<const halCpuKernelParams*>(symbol);
    return std::vector<size_t>(declared->sizes, declared->sizes + declared->count);
}

halError Function::checkArguments(const halKernelArg* args, uint32_t numArgs) const {
    if (!parameters) return HAL_SUCCESS;
    if (numArgs != parameters->size()) {
        return plugin::fail(HAL_ERROR_INVALID_VALUE,
                            "kernel '%s' declares %zu parameters (HAL_CPU_KERNEL_PARAMS), the "
                            "launch passes %u arguments",
                            name.c_str(), parameters->size(), numArgs);
    }
    for (uint32_t i = 0; i < numArgs; ++i) {
        if (args[i].size != (*parameters)[i]) {
            return plugin::fail(HAL_ERROR_INVALID_VALUE,
                                "argument %u of kernel '%s' is %zu bytes, its parameter %zu "
                                "(HAL_CPU_KERNEL_PARAMS)",
                                i, name.c_str(), args[i].size, (*parameters)[i]);
        }
    }
    return HAL_SUCCESS;
}

halError Module::function(const char* name, Function*& function) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto known = functions_.find(name);
    if (known != functions_.end()) {
        function = known->second.get();
        return HAL_SUCCESS;
    }
    // Only functions are kernels: launching a data symbol would execute its bytes. An IFUNC
    // is a function too (GCC's target_clones makes one per kernel); dlsym returns the
    // implementation its resolver chose.
    const int type = symbolType(name);
    if (type != -1 && type != STT_FUNC && type != STT_GNU_IFUNC) {
        return plugin::fail(HAL_ERROR_NOT_FOUND,
                            "the module's symbol '%s' is %s, not a function: only functions are "
                            "kernels",
                            name, symbolKind(type));
    }
    dlerror();  // clear a stale error
    void* symbol = dlsym(library_, name);
    if (symbol == nullptr || !definedIn(library_, symbol)) {
        const char* reason = symbol == nullptr ? dlerror() : nullptr;
        return plugin::fail(HAL_ERROR_NOT_FOUND, "the module exports no kernel named '%s'%s%s%s",
                            name, reason != nullptr ? " (" : "", reason != nullptr ? reason : "",
                            reason != nullptr ? ")" : "");
    }
    auto made = std::make_unique<Function>(
        Function{reinterpret_cast<halCpuKernelFn>(symbol), name, declaredParameters(name)});
    function = made.get();
    functions_.emplace(name, std::move(made));
    return HAL_SUCCESS;
}

halError moduleLoadData(halPluginDevice /*device*/, const void* image, size_t size,
                        halPluginModule* module) {
    std::unique_ptr<Module> loaded;
    if (const halError error = Module::load(image, size, loaded); error != HAL_SUCCESS) {
        return error;
    }
    plugin::log(HAL_LOG_DEBUG, "loaded a %zu-byte kernel module", size);
    *module = plugin::toHandle(loaded.release());
    return HAL_SUCCESS;
}

halError moduleUnload(halPluginModule module) {
    // The core has waited for the launches from it.
    return plugin::destroyHandle<Module>(module);
}

halError moduleGetFunction(halPluginModule module, const char* name, halPluginFunction* function) {
    Function* found = nullptr;
    if (const halError error = plugin::fromHandle<Module>(module).function(name, found);
        error != HAL_SUCCESS) {
        return error;
    }
    *function = plugin::toHandle(found);
    return HAL_SUCCESS;
}

halError makeKernelLaunch(halPluginFunction function, halDim3 grid, halDim3 block,
                          size_t dynamicSharedBytes, const halKernelArg* args, uint32_t numArgs,
                          KernelLaunch* launch) {
    uint64_t blocks = 0;
    if (__builtin_mul_overflow(uint64_t{grid.x} * grid.y, grid.z, &blocks)) {
        return plugin::fail(HAL_ERROR_INVALID_VALUE,
                            "a grid of %u x %u x %u blocks exceeds 2^64 blocks", grid.x, grid.y,
                            grid.z);
    }
    if (!KernelArguments::withinLimit(args, numArgs)) {
        return plugin::fail(HAL_ERROR_INVALID_VALUE,
                            "the kernel arguments exceed the device's %zu bytes",
                            KernelArguments::kMaxTotalBytes);
    }
    const Function& kernel = plugin::fromHandle<Function>(function);
    if (halError e = kernel.checkArguments(args, numArgs)) return e;
    launch->function = &kernel;
    launch->grid = grid;
    launch->block = block;
    launch->sharedBytes = dynamicSharedBytes;
    launch->args.assign(args, numArgs);
    return HAL_SUCCESS;
}

halError launchKernel(halPluginStream stream, halPluginFunction function, halDim3 grid,
                      halDim3 block, size_t dynamicSharedBytes, const halKernelArg* args,
                      uint32_t numArgs) {
    KernelLaunch launch{};
    if (halError e =
            makeKernelLaunch(function, grid, block, dynamicSharedBytes, args, numArgs, &launch)) {
        return e;
    }
    plugin::fromHandle<Stream>(stream).submit(std::move(launch));
    return HAL_SUCCESS;
}

}  // namespace polyhal::cpu
