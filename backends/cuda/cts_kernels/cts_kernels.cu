// The conformance suite's kernels for the CUDA backend. The names, arguments and behaviour are
// those listed in backends/cpu/cts_kernels/cts_kernels.c; element i of a one-dimensional launch is
// blockIdx.x * blockDim.x + threadIdx.x.
//
// CUDA differs from the CPU backend in one visible way: a kernel that fails (fail_with_code,
// or block_sum given too little shared memory) raises a sticky error, so every later call on the
// device's context reports it until the process exits.
#include <stdint.h>

namespace {

__device__ uint32_t elementIndex() { return blockIdx.x * blockDim.x + threadIdx.x; }

__device__ uint32_t dynamicSharedBytes() {
    uint32_t bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    return bytes;
}

}  // namespace

extern "C" __global__ void fill_u32(uint32_t* out, uint32_t value, uint32_t n) {
    const uint32_t i = elementIndex();
    if (i < n) out[i] = value;
}

extern "C" __global__ void vadd(const float* a, const float* b, float* c, uint32_t n) {
    const uint32_t i = elementIndex();
    if (i < n) c[i] = a[i] + b[i];
}

// Fails the launch when it gave less dynamic shared memory than the block stages.
extern "C" __global__ void block_sum(const uint32_t* in, uint32_t* out, uint32_t n) {
    extern __shared__ uint32_t staged[];
    if (dynamicSharedBytes() < blockDim.x * sizeof(uint32_t)) __trap();
    const uint32_t i = elementIndex();
    staged[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    if (threadIdx.x != 0) return;
    uint32_t sum = 0;
    for (uint32_t t = 0; t < blockDim.x; ++t) sum += staged[t];
    out[blockIdx.x] = sum;
}

extern "C" __global__ void fail_with_code() { __trap(); }

// One update per block, made by its first thread.
extern "C" __global__ void block_index(uint32_t* out) {
    if (threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0) return;
    const uint32_t linear = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    out[linear] += linear + 1;
}
