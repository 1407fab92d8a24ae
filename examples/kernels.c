/*
 * CPU kernels of the sync_patterns example (see <polyhal/cpu_kernel.h>), launched over a
 * one-dimensional grid where element i = blockIdx.x * blockDim.x + thread.
 */
#include <polyhal/cpu_kernel.h>

/* fill(float* out, float value, uint32_t n): out[i] = value */
HAL_CPU_KERNEL(fill) {
    float* out = HAL_CPU_ARG(ctx, 0, float*);
    const float value = HAL_CPU_ARG(ctx, 1, float);
    const uint32_t n = HAL_CPU_ARG(ctx, 2, uint32_t);
    for (uint32_t t = 0; t < ctx->blockDim.x; ++t) {
        const uint32_t i = ctx->blockIdx.x * ctx->blockDim.x + t;
        if (i < n) out[i] = value;
    }
    return 0;
}

/* saxpy(uint32_t n, float a, const float* x, float* y): y[i] = a * x[i] + y[i] */
HAL_CPU_KERNEL(saxpy) {
    const uint32_t n = HAL_CPU_ARG(ctx, 0, uint32_t);
    const float a = HAL_CPU_ARG(ctx, 1, float);
    const float* x = HAL_CPU_ARG(ctx, 2, const float*);
    float* y = HAL_CPU_ARG(ctx, 3, float*);
    for (uint32_t t = 0; t < ctx->blockDim.x; ++t) {
        const uint32_t i = ctx->blockIdx.x * ctx->blockDim.x + t;
        if (i < n) y[i] = a * x[i] + y[i];
    }
    return 0;
}
