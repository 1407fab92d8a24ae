/*
 * The conformance suite's kernels for the CPU backend (see <polyhal/cpu_kernel.h>).
 *
 * Every backend's CTS kernel image provides kernels with these names and arguments, launched
 * over a one-dimensional grid where element i = blockIdx.x * blockDim.x + threadIdx.x:
 *
 *   fill_u32(uint32_t* out, uint32_t value, uint32_t n)         out[i] = value
 *   vadd(const float* a, const float* b, float* c, uint32_t n)  c[i] = a[i] + b[i]
 *   block_sum(const uint32_t* in, uint32_t* out, uint32_t n)    out[block] = sum of the block's
 *       elements, staged through blockDim.x * 4 bytes of dynamic shared memory
 *   fail_with_code()                                            fails the launch
 *
 * and, optionally (the CTS skips a test whose kernel a backend's image lacks):
 *
 *   block_index(uint32_t* out)    out[linear block index] += linear block index + 1, over a
 *                                 three-dimensional grid (each block must run exactly once)
 */
#include <polyhal/cpu_kernel.h>

#include <stdint.h>

/* A launch with the wrong number of arguments fails (returns 1) instead of reading garbage. */
static int hasArgs(const halCpuKernelContext* ctx, uint32_t count) {
    return ctx->numArgs == count;
}

HAL_CPU_KERNEL(fill_u32) {
    if (!hasArgs(ctx, 3)) return 1;
    uint32_t* out = HAL_CPU_ARG(ctx, 0, uint32_t*);
    const uint32_t value = HAL_CPU_ARG(ctx, 1, uint32_t);
    const uint32_t n = HAL_CPU_ARG(ctx, 2, uint32_t);
    for (uint32_t t = 0; t < ctx->blockDim.x; ++t) {
        const uint32_t i = ctx->blockIdx.x * ctx->blockDim.x + t;
        if (i < n) out[i] = value;
    }
    return 0;
}

HAL_CPU_KERNEL(vadd) {
    if (!hasArgs(ctx, 4)) return 1;
    const float* a = HAL_CPU_ARG(ctx, 0, const float*);
    const float* b = HAL_CPU_ARG(ctx, 1, const float*);
    float* c = HAL_CPU_ARG(ctx, 2, float*);
    const uint32_t n = HAL_CPU_ARG(ctx, 3, uint32_t);
    for (uint32_t t = 0; t < ctx->blockDim.x; ++t) {
        const uint32_t i = ctx->blockIdx.x * ctx->blockDim.x + t;
        if (i < n) c[i] = a[i] + b[i];
    }
    return 0;
}

/* Returns 2 when the launch gave less shared memory than the block needs and 3 when it is not
 * 64-byte aligned, so a backend that mishandles shared memory fails the test loudly. */
HAL_CPU_KERNEL(block_sum) {
    if (!hasArgs(ctx, 3)) return 1;
    const uint32_t* in = HAL_CPU_ARG(ctx, 0, const uint32_t*);
    uint32_t* out = HAL_CPU_ARG(ctx, 1, uint32_t*);
    const uint32_t n = HAL_CPU_ARG(ctx, 2, uint32_t);
    uint32_t* staged = (uint32_t*)ctx->sharedMemory;
    if (staged == NULL || ctx->sharedMemoryBytes < ctx->blockDim.x * sizeof(uint32_t)) {
        return 2;
    }
    if ((uintptr_t)staged % 64 != 0) return 3;
    for (uint32_t t = 0; t < ctx->blockDim.x; ++t) {
        const uint32_t i = ctx->blockIdx.x * ctx->blockDim.x + t;
        staged[t] = i < n ? in[i] : 0;
    }
    uint32_t sum = 0;
    for (uint32_t t = 0; t < ctx->blockDim.x; ++t) sum += staged[t];
    out[ctx->blockIdx.x] = sum;
    return 0;
}

HAL_CPU_KERNEL(fail_with_code) {
    (void)ctx;
    return 7;
}

HAL_CPU_KERNEL(block_index) {
    if (!hasArgs(ctx, 1)) return 1;
    uint32_t* out = HAL_CPU_ARG(ctx, 0, uint32_t*);
    const uint32_t linear =
        (ctx->blockIdx.z * ctx->gridDim.y + ctx->blockIdx.y) * ctx->gridDim.x + ctx->blockIdx.x;
    out[linear] += linear + 1;
    return 0;
}
