// Modules, kernel functions and launches.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "command_runner.hpp"
#include "stream_ops.hpp"

using namespace polyhal;

namespace {

halError requireKernels(const Device* device, const char* operation) {
    if (device->supports(HAL_DEVICE_CAP_KERNELS)) return HAL_SUCCESS;
    return fail(HAL_ERROR_NOT_SUPPORTED, "{}: the {} backend cannot load kernels", operation,
                device->backend->name);
}

halError loadModule(halModule* module, const void* image, size_t size, const char* operation) {
    Device* device = currentDevice();
    if (halError e = requireKernels(device, operation)) return e;
    halPluginModule native = nullptr;
    if (halError e = checked(device->vtable->moduleLoadData(device->native, image, size, &native),
                             device, operation)) {
        return e;
    }
    halModule_t* object = runtime().modules.create();
    if (object == nullptr) {
        device->vtable->moduleUnload(native);
        return fail(HAL_ERROR_OUT_OF_MEMORY, "{}: too many loaded modules", operation);
    }
    object->device = device;
    object->native = native;
    check::created(object, "module", operation);
    *module = object;
    return HAL_SUCCESS;
}

halError resolveModule(halModule handle, halModule_t** module, const char* operation) {
    halModule_t* object = runtime().modules.validate(handle);
    if (object == nullptr) {
        return fail(HAL_ERROR_INVALID_HANDLE, "{}: module {} is not a loaded module", operation,
                    static_cast<const void*>(handle));
    }
    *module = object;
    return HAL_SUCCESS;
}

// Why a file of `mode` cannot be a module file, or nullptr for a regular file.
const char* notRegularProblem(mode_t mode) {
    if (S_ISREG(mode)) return nullptr;
    return S_ISDIR(mode) ? std::strerror(EISDIR) : "not a regular file";
}

// The whole content of the regular file at `path`; INVALID_VALUE with the OS error otherwise.
// Opening a FIFO for reading waits for a writer, and opening a device may act on it: the type
// is checked before the open, which cannot block (O_NONBLOCK), and again on what was opened,
// in case the path was replaced in between.
halError readModuleFile(const char* path, std::vector<char>* image, const char* operation) {
    const auto refuse = [path, operation](const char* problem) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: cannot read '{}': {}", operation, path, problem);
    };
    struct stat status;
    if (stat(path, &status) != 0) return refuse(std::strerror(errno));
    if (const char* problem = notRegularProblem(status.st_mode)) return refuse(problem);
    const int file = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (file < 0) return refuse(std::strerror(errno));
    const auto closeFile = [file](halError result) {
        close(file);
        return result;
    };
    if (fstat(file, &status) != 0) return closeFile(refuse(std::strerror(errno)));
    if (const char* problem = notRegularProblem(status.st_mode)) return closeFile(refuse(problem));
    image->resize(static_cast<size_t>(status.st_size));
    size_t done = 0;
    while (done < image->size()) {
        const ssize_t got = read(file, image->data() + done, image->size() - done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return closeFile(refuse(std::strerror(errno)));
        if (got == 0) break;  // the file shrank meanwhile
        done += static_cast<size_t>(got);
    }
    image->resize(done);
    if (image->empty()) return closeFile(refuse("the file is empty"));
    return closeFile(HAL_SUCCESS);
}

// Is dims.x * dims.y * dims.z above `limit`? A product past 2^64 is, rather than wrapping.
bool exceeds(halDim3 dims, uint64_t limit) {
    uint64_t product = 0;
    return __builtin_mul_overflow(uint64_t{dims.x} * dims.y, dims.z, &product) || product > limit;
}

halError checkLaunch(const halFunction_t* function, const halStream_t* stream, halDim3 grid,
                     halDim3 block, size_t sharedBytes, const halKernelArg* args, uint32_t numArgs,
                     const char* op) {
    const Device* device = stream->device;
    if (function->device != device) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: the function was loaded on device {}, the stream belongs to device {}", op,
                    function->device->ordinal, device->ordinal);
    }
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: grid ({},{},{}) and block ({},{},{}) must not "
                    "have a zero dimension",
                    op, grid.x, grid.y, grid.z, block.x, block.y, block.z);
    }
    if (exceeds(block, device->info.maxThreadsPerBlock)) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: block ({},{},{}) has more than the device's {} threads per block", op,
                    block.x, block.y, block.z, device->info.maxThreadsPerBlock);
    }
    if (sharedBytes > device->info.maxSharedMemoryPerBlock) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: {} bytes of dynamic shared memory exceed the device's {}", op, sharedBytes,
                    device->info.maxSharedMemoryPerBlock);
    }
    if (numArgs > 0 && args == nullptr) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: args is NULL but numArgs is {}", op, numArgs);
    }
    uint64_t argumentBytes = 0;
    for (uint32_t i = 0; i < numArgs; ++i) {
        if (args[i].value == nullptr || args[i].size == 0) {
            return fail(HAL_ERROR_INVALID_VALUE, "{}: argument {} has {}", op, i,
                        args[i].value == nullptr ? "a NULL value pointer" : "size 0");
        }
        if (__builtin_add_overflow(argumentBytes, args[i].size, &argumentBytes) ||
            argumentBytes > device->info.maxKernelArgumentBytes) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "{}: arguments 0 to {} ({} bytes for argument {}) exceed the device's "
                        "{} bytes of kernel arguments",
                        op, i, args[i].size, i, device->info.maxKernelArgumentBytes);
        }
    }
    return HAL_SUCCESS;
}

// HAL_ERROR_INVALID_VALUE unless each of the `numArgs` modes `uses` gives is a halKernelArgAccess.
halError checkUses(check::ArgUses uses, uint32_t numArgs, const char* operation) {
    if (uses.access == nullptr && uses.uses == nullptr) return HAL_SUCCESS;
    for (uint32_t i = 0; i < numArgs; ++i) {
        const uint32_t mode = uses.mode(i);
        if (mode > HAL_KERNEL_ARG_NO_ACCESS) {
            return fail(HAL_ERROR_INVALID_VALUE, "{}: {}[{}] is {}, not a halKernelArgAccess",
                        operation, uses.uses != nullptr ? "uses" : "access", i, mode);
        }
    }
    return HAL_SUCCESS;
}

// halLaunchKernel, halLaunchKernelWithAccess and halLaunchKernelWithUses, as public function
// `op`: the handles are validated first, then the values.
halError launchKernel(const char* op, halFunction functionHandle, halDim3 grid, halDim3 block,
                      size_t dynamicSharedBytes, const halKernelArg* args, check::ArgUses uses,
                      uint32_t numArgs, halStream streamHandle) {
    return apiCall(op, CallPolicy::kReachesDevice, [&] {
        halFunction_t* function = runtime().functions.validate(functionHandle);
        if (function == nullptr) {
            return fail(HAL_ERROR_INVALID_HANDLE,
                        "{}: function {} is not a live kernel function (NULL, or its "
                        "module was unloaded)",
                        op, static_cast<const void*>(functionHandle));
        }
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(streamHandle, &stream, op)) return e;
        if (halError e = checkUses(uses, numArgs, op)) return e;
        if (halError e =
                checkLaunch(function, stream, grid, block, dynamicSharedBytes, args, numArgs, op)) {
            return e;
        }
        // What it touches is each pointer-sized argument, as `uses` says: the pool keeps the blocks
        // they point into (it ignores other values cheaply), and the race detector records the
        // accesses.
        trace::noteKernel(function);
        return runCommand(stream,
                          KernelCommand{function, function->serial, grid, block, dynamicSharedBytes,
                                        args, uses, numArgs},
                          op);
    });
}

}  // namespace

extern "C" {

HAL_API halError halModuleLoadData(halModule* module, const void* image, size_t size) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (halError e = requireOutput(module, op, "module")) return e;
        if (image == nullptr || size == 0) {
            return fail(HAL_ERROR_INVALID_VALUE, "{}: the image is {}", op,
                        image == nullptr ? "NULL" : "empty");
        }
        return loadModule(module, image, size, op);
    });
}

HAL_API halError halModuleLoadFile(halModule* module, const char* path) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (halError e = requireOutput(module, op, "module")) return e;
        if (halError e = requireOutput(path, op, "path")) return e;
        std::vector<char> image;
        if (halError e = readModuleFile(path, &image, op)) return e;
        return loadModule(module, image.data(), image.size(), op);
    });
}

HAL_API halError halModuleGetFunction(halFunction* function, halModule moduleHandle,
                                      const char* name) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (halError e = requireOutput(function, op, "function")) return e;
        if (halError e = requireOutput(name, op, "name")) return e;
        halModule_t* module = nullptr;
        if (halError e = resolveModule(moduleHandle, &module, op)) return e;
        std::lock_guard<std::mutex> lock(module->mutex);
        if (auto it = module->functions.find(name); it != module->functions.end()) {
            *function = it->second;
            return HAL_SUCCESS;
        }
        Device* device = module->device;
        halPluginFunction native = nullptr;
        if (halError e = checked(device->vtable->moduleGetFunction(module->native, name, &native),
                                 device, op)) {
            return e;
        }
        halFunction_t* object = runtime().functions.create(halFunction_t{device, module, native});
        if (object == nullptr) {
            return fail(HAL_ERROR_OUT_OF_MEMORY, "{}: too many functions", op);
        }
        static std::atomic<uint64_t> serials{0};
        object->serial = serials.fetch_add(1, std::memory_order_relaxed) + 1;
        object->name = module->functions.emplace(name, object).first->first.c_str();
        *function = object;
        return HAL_SUCCESS;
    });
}

HAL_API halError halModuleUnload(halModule handle) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        halModule_t* module = nullptr;
        if (halError e = resolveModule(handle, &module, op)) return e;
        Device* device = module->device;
        // Kernels from the module may still be queued; the code must outlive them.
        const halError drained = synchronizeDevice(device, op);
        for (auto& entry : module->functions) runtime().functions.destroy(entry.second);
        const halPluginModule native = module->native;
        check::destroyed(module);
        runtime().modules.destroy(module);
        const halError unloaded = checked(device->vtable->moduleUnload(native), device, op);
        return unloaded != HAL_SUCCESS ? unloaded : drained;
    });
}

HAL_API halError halLaunchKernel(halFunction function, halDim3 grid, halDim3 block,
                                 size_t dynamicSharedBytes, const halKernelArg* args,
                                 uint32_t numArgs, halStream stream) {
    return launchKernel(__func__, function, grid, block, dynamicSharedBytes, args, {}, numArgs,
                        stream);
}

HAL_API halError halLaunchKernelWithAccess(halFunction function, halDim3 grid, halDim3 block,
                                           size_t dynamicSharedBytes, const halKernelArg* args,
                                           const halKernelArgAccess* access, uint32_t numArgs,
                                           halStream stream) {
    return launchKernel(__func__, function, grid, block, dynamicSharedBytes, args,
                        {access, nullptr}, numArgs, stream);
}

HAL_API halError halLaunchKernelWithUses(halFunction function, halDim3 grid, halDim3 block,
                                         size_t dynamicSharedBytes, const halKernelArg* args,
                                         const halKernelArgUse* uses, uint32_t numArgs,
                                         halStream stream) {
    return launchKernel(__func__, function, grid, block, dynamicSharedBytes, args, {nullptr, uses},
                        numArgs, stream);
}

}  // extern "C"
