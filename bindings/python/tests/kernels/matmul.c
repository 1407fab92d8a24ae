/*
 * The Python binding tests' CPU kernel (see <polyhal/cpu_kernel.h>); matmul.cl is the same
 * kernel in OpenCL C.
 *
 *   matmul(const float* a, const float* b, float* c, uint32_t m, uint32_t k, uint32_t n)
 *       c = a @ b for row-major a (m x k), b (k x n), c (m x n), over a two-dimensional grid:
 *       column = blockIdx.x * blockDim.x + thread x, row = blockIdx.y * blockDim.y + thread y.
 *
 * A launch whose arguments do not have these sizes fails (returns 1), so a test that passes a
 * wrong argument sees HAL_ERROR_LAUNCH_FAILED instead of reading garbage.
 */
#include <polyhal/cpu_kernel.h>

#include <stddef.h>
#include <stdint.h>

static int hasMatmulArgs(const halCpuKernelContext* ctx) {
    static const size_t sizes[6] = {sizeof(void*),    sizeof(void*),    sizeof(void*),
                                    sizeof(uint32_t), sizeof(uint32_t), sizeof(uint32_t)};
    if (ctx->numArgs != 6) return 0;
    for (uint32_t i = 0; i < 6; ++i) {
        if (ctx->argSizes[i] != sizes[i]) return 0;
    }
    return 1;
}

HAL_CPU_KERNEL(matmul) {
    if (!hasMatmulArgs(ctx)) return 1;
    const float* a = HAL_CPU_ARG(ctx, 0, const float*);
    const float* b = HAL_CPU_ARG(ctx, 1, const float*);
    float* c = HAL_CPU_ARG(ctx, 2, float*);
    const uint32_t m = HAL_CPU_ARG(ctx, 3, uint32_t);
    const uint32_t k = HAL_CPU_ARG(ctx, 4, uint32_t);
    const uint32_t n = HAL_CPU_ARG(ctx, 5, uint32_t);
    for (uint32_t ty = 0; ty < ctx->blockDim.y; ++ty) {
        const uint32_t row = ctx->blockIdx.y * ctx->blockDim.y + ty;
        if (row >= m) break;
        for (uint32_t tx = 0; tx < ctx->blockDim.x; ++tx) {
            const uint32_t column = ctx->blockIdx.x * ctx->blockDim.x + tx;
            if (column >= n) break;
            float sum = 0.0f;
            for (uint32_t i = 0; i < k; ++i) {
                sum += a[(size_t)row * k + i] * b[(size_t)i * n + column];
            }
            c[(size_t)row * n + column] = sum;
        }
    }
    return 0;
}
