/*
 * Kernels for the CPU backend's unit tests (see <polyhal/cpu_kernel.h>). Threads are counted
 * linearly: block b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z), thread t of
 * a block = x + blockDim.x * (y + blockDim.y * z), global id = b * threads per block + t.
 */
#include <polyhal/cpu_kernel.h>

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

static uint32_t linearBlock(const halCpuKernelContext* ctx) {
    return ctx->blockIdx.x + ctx->gridDim.x * (ctx->blockIdx.y + ctx->gridDim.y * ctx->blockIdx.z);
}

static uint32_t threadsPerBlock(const halCpuKernelContext* ctx) {
    return ctx->blockDim.x * ctx->blockDim.y * ctx->blockDim.z;
}

/* write_ids(uint32_t* out, uint32_t scale): out[global id] = global id * scale */
HAL_CPU_KERNEL(write_ids) {
    uint32_t* out = HAL_CPU_ARG(ctx, 0, uint32_t*);
    const uint32_t scale = HAL_CPU_ARG(ctx, 1, uint32_t);
    const uint32_t first = linearBlock(ctx) * threadsPerBlock(ctx);
    for (uint32_t t = 0; t < threadsPerBlock(ctx); ++t) out[first + t] = (first + t) * scale;
    return 0;
}

/* fail_in_block(uint32_t block, int32_t value): that block returns `value`, the others 0 */
HAL_CPU_KERNEL(fail_in_block) {
    const uint32_t failing = HAL_CPU_ARG(ctx, 0, uint32_t);
    const int32_t value = HAL_CPU_ARG(ctx, 1, int32_t);
    return linearBlock(ctx) == failing ? value : 0;
}

/* describe_launch(uint64_t* out): block 0 writes what it sees of the launch:
 * out = {gridDim.x, .y, .z, blockDim.x, .y, .z, numArgs, argSizes[0], sharedMemoryBytes,
 *        context size} */
HAL_CPU_KERNEL(describe_launch) {
    uint64_t* out = HAL_CPU_ARG(ctx, 0, uint64_t*);
    if (linearBlock(ctx) != 0) return 0;
    out[0] = ctx->gridDim.x;
    out[1] = ctx->gridDim.y;
    out[2] = ctx->gridDim.z;
    out[3] = ctx->blockDim.x;
    out[4] = ctx->blockDim.y;
    out[5] = ctx->blockDim.z;
    out[6] = ctx->numArgs;
    out[7] = ctx->argSizes[0];
    out[8] = ctx->sharedMemoryBytes;
    out[9] = ctx->size;
    return 0;
}

/* use_shared_memory(uint32_t* out): fills the whole shared buffer with the block number, reads
 * it back and writes out[block] = 1 if it was 64-byte aligned and kept its contents. */
HAL_CPU_KERNEL(use_shared_memory) {
    uint32_t* out = HAL_CPU_ARG(ctx, 0, uint32_t*);
    const uint32_t block = linearBlock(ctx);
    uint32_t* shared = (uint32_t*)ctx->sharedMemory;
    const size_t words = ctx->sharedMemoryBytes / sizeof(uint32_t);
    int ok = shared != NULL && ((uintptr_t)shared % 64) == 0;
    for (size_t i = 0; ok && i < words; ++i) shared[i] = block;
    for (size_t i = 0; ok && i < words; ++i) ok = shared[i] == block;
    out[block] = (uint32_t)ok;
    return 0;
}

/* sum_array_argument(uint64_t* out, struct {uint32_t v[512];} by value): *out = sum of v */
typedef struct {
    uint32_t values[512];
} LargeArgument;

HAL_CPU_KERNEL(sum_array_argument) {
    uint64_t* out = HAL_CPU_ARG(ctx, 0, uint64_t*);
    const LargeArgument* argument = &HAL_CPU_ARG(ctx, 1, LargeArgument);
    uint64_t sum = 0;
    for (unsigned i = 0; i < 512; ++i) sum += argument->values[i];
    *out = sum;
    return 0;
}

/* meet(atomic_uint* arrived): every block of a two-block grid waits until both have started,
 * which only completes when the blocks really run at the same time. Returns 1 if the other block
 * has not arrived within 30 s. */
HAL_CPU_KERNEL(meet) {
    atomic_uint* arrived = HAL_CPU_ARG(ctx, 0, atomic_uint*);
    atomic_fetch_add(arrived, 1);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (atomic_load(arrived) < 2) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 30) return 1;
    }
    return 0;
}

/* Exported symbols that are not functions: looking them up as kernels is NOT_FOUND. */
__attribute__((visibility("default"))) int exported_counter = 7;
__attribute__((visibility("default"))) _Thread_local int exported_per_thread = 9;

/* ifunc_kernel(uint32_t* out): *out = 42, through an IFUNC whose resolver picks the
 * implementation (what GCC's target_clones makes of a kernel). */
static int ifuncKernelImplementation(const halCpuKernelContext* ctx) {
    *HAL_CPU_ARG(ctx, 0, uint32_t*) = 42;
    return 0;
}
static halCpuKernelFn resolveIfuncKernel(void) { return ifuncKernelImplementation; }
__attribute__((visibility("default"), ifunc("resolveIfuncKernel"))) int ifunc_kernel(
    const halCpuKernelContext* ctx);

/* declared_add(uint32_t* out, uint32_t value): out[0] += value, with its parameters declared */
HAL_CPU_KERNEL(declared_add) {
    uint32_t* out = HAL_CPU_ARG(ctx, 0, uint32_t*);
    if (linearBlock(ctx) == 0) out[0] += HAL_CPU_ARG(ctx, 1, uint32_t);
    return 0;
}
HAL_CPU_KERNEL_PARAMS(declared_add, sizeof(uint32_t*), sizeof(uint32_t));
