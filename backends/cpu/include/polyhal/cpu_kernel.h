/*
 * Writing kernels for the CPU backend.
 *
 * A CPU module is a host shared object (built with -shared -fPIC) that exports one C function
 * per kernel. halModuleLoadFile takes its path; halModuleLoadData takes its bytes.
 * halModuleGetFunction looks the kernel up by its exported name; only functions are kernels
 * (an IFUNC, as GCC's target_clones makes, is one), an exported variable is HAL_ERROR_NOT_FOUND.
 * Loading the module runs its constructors: it is native code, checked against corruption
 * (docs/reliability.md), not sandboxed.
 *
 * A launch over `grid` blocks calls the kernel once per block; blocks run in parallel on the
 * backend's worker threads, in no particular order. The kernel itself loops over the threads of
 * its block (ctx->blockDim), so one call does the work of blockDim.x*y*z GPU threads; threads of
 * a block therefore never need a barrier. ctx->sharedMemory is the block's dynamic shared memory
 * (dynamicSharedBytes of the launch, 64-byte aligned, private to the call).
 *
 * The kernel returns 0 on success. Any other value fails the launch: the stream reports
 * HAL_ERROR_LAUNCH_FAILED at its next query or synchronisation, with the kernel name and the
 * returned value in the message.
 *
 * Example, y[i] = a * x[i] + y[i]:
 *
 *     #include <polyhal/cpu_kernel.h>
 *
 *     HAL_CPU_KERNEL(saxpy) {
 *         uint32_t n = HAL_CPU_ARG(ctx, 0, uint32_t);
 *         float a = HAL_CPU_ARG(ctx, 1, float);
 *         const float* x = HAL_CPU_ARG(ctx, 2, const float*);
 *         float* y = HAL_CPU_ARG(ctx, 3, float*);
 *         for (uint32_t t = 0; t < ctx->blockDim.x; ++t) {
 *             uint32_t i = ctx->blockIdx.x * ctx->blockDim.x + t;
 *             if (i < n) y[i] = a * x[i] + y[i];
 *         }
 *         return 0;
 *     }
 *
 * launched with halKernelArg args[] = {{&n, sizeof n}, {&a, sizeof a}, {&x, sizeof x},
 * {&y, sizeof y}}.
 *
 * A kernel may declare its parameters, their sizes in order, next to its definition:
 *     HAL_CPU_KERNEL_PARAMS(saxpy, sizeof(uint32_t), sizeof(float), sizeof(const float*),
 *                           sizeof(float*));
 * A launch of a declared kernel whose arguments differ in number or in any size is then refused
 * with HAL_ERROR_INVALID_VALUE, naming the kernel and the argument, before it runs (as CUDA
 * refuses arguments that do not match a kernel's parameters), in a graph too. An undeclared
 * kernel takes any arguments, as before; a kernel without parameters needs no declaration.
 * The declaration is an exported variable, hal_cpu_params_<name>, that the backend looks up
 * when the kernel is.
 */
#ifndef POLYHAL_CPU_KERNEL_H_
#define POLYHAL_CPU_KERNEL_H_

#include <stddef.h>
#include <stdint.h>

#include <polyhal/hal.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a kernel sees of its launch. Read-only. */
typedef struct halCpuKernelContext {
    size_t size;              /* sizeof(halCpuKernelContext) of the backend that calls */
    halDim3 gridDim;          /* the launch's grid */
    halDim3 blockDim;         /* threads per block: the kernel loops over them */
    halDim3 blockIdx;         /* this call's block */
    void* sharedMemory;       /* dynamic shared memory of this block, or NULL */
    size_t sharedMemoryBytes; /* its size */
    const void* const* args;  /* args[i] points to a copy of argument i's bytes */
    const size_t* argSizes;   /* argSizes[i] is argument i's size in bytes */
    uint32_t numArgs;
} halCpuKernelContext;

/* The type of every CPU kernel. */
typedef int (*halCpuKernelFn)(const halCpuKernelContext* ctx);

#if defined(__GNUC__)
#define HAL_CPU_KERNEL_EXPORT __attribute__((visibility("default")))
#else
#define HAL_CPU_KERNEL_EXPORT
#endif

#ifdef __cplusplus
#define HAL_CPU_KERNEL_LINKAGE extern "C"
#else
#define HAL_CPU_KERNEL_LINKAGE
#endif

/* Defines an exported kernel `name` whose context parameter is called `ctx`. */
#define HAL_CPU_KERNEL(name) \
    HAL_CPU_KERNEL_LINKAGE HAL_CPU_KERNEL_EXPORT int name(const halCpuKernelContext* ctx)

/* A kernel's declared parameters (HAL_CPU_KERNEL_PARAMS): how many, and each one's size. */
typedef struct halCpuKernelParams {
    uint32_t count;
    const size_t* sizes;
} halCpuKernelParams;

/* Declares the parameters of kernel `name`: the size of each, in order (at least one). */
#define HAL_CPU_KERNEL_PARAMS(name, ...)                                                      \
    static const size_t hal_cpu_param_sizes_##name[] = {__VA_ARGS__};                         \
    HAL_CPU_KERNEL_LINKAGE HAL_CPU_KERNEL_EXPORT const halCpuKernelParams hal_cpu_params_##name = { \
        (uint32_t)(sizeof(hal_cpu_param_sizes_##name) / sizeof(size_t)),                     \
        hal_cpu_param_sizes_##name}

/* Argument `index` read as `type` (the caller passed sizeof(type) bytes). */
#define HAL_CPU_ARG(ctx, index, type) (*(type const*)((ctx)->args[(index)]))

#ifdef __cplusplus
}
#endif

#endif /* POLYHAL_CPU_KERNEL_H_ */
