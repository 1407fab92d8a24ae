// The conformance suite's kernels for the CUDA and HIP backends, one source for both: nvcc
// builds it for CUDA (backends/cuda/cts_kernels), hipcc for AMD GPUs
// (backends/hip/cts_kernels). The names, arguments and behaviour are those listed in
// backends/cpu/cts_kernels/cts_kernels.c; element i of a one-dimensional launch is
// blockIdx.x * blockDim.x + threadIdx.x.
//
// The GPUs differ from the CPU backend in one visible way: a kernel that fails (fail_with_code,
// or block_sum given too little shared memory) raises a sticky error on CUDA, so every later call
// on the device's context reports it until the context is reset; ROCm aborts the process.
#if defined(__HIP__)
#include <hip/hip_runtime.h>
#endif
#include <stdint.h>

namespace {

__device__ uint32_t elementIndex() { return blockIdx.x * blockDim.x + threadIdx.x; }

// The dynamic shared memory the launch gave the block.
__device__ uint32_t dynamicSharedBytes() {
#if defined(__HIP__)
    // The launch's group segment (hsa_kernel_dispatch_packet_t::group_segment_size, the packet's
    // eighth 32-bit word) holds the kernel's static LDS and the launch's dynamic LDS together.
    const auto* packet = static_cast<const uint32_t*>(__builtin_amdgcn_dispatch_ptr());
    return packet[7] - __builtin_amdgcn_groupstaticsize();
#else
    uint32_t bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    return bytes;
#endif
}

// Ends the launch with a device-side fault.
__device__ void fault() {
#if defined(__HIP__)
    __builtin_trap();
#else
    __trap();
#endif
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
    if (dynamicSharedBytes() < blockDim.x * sizeof(uint32_t)) fault();
    const uint32_t i = elementIndex();
    staged[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    if (threadIdx.x != 0) return;
    uint32_t sum = 0;
    for (uint32_t t = 0; t < blockDim.x; ++t) sum += staged[t];
    out[blockIdx.x] = sum;
}

extern "C" __global__ void fail_with_code() { fault(); }

// One update per block, made by its first thread.
extern "C" __global__ void block_index(uint32_t* out) {
    if (threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0) return;
    const uint32_t linear = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    out[linear] += linear + 1;
}
