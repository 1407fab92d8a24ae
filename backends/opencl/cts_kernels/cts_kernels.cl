/*
 * The conformance suite's kernels for the OpenCL backend: OpenCL C source, built by
 * halModuleLoadFile. Same names and arguments as backends/cpu/cts_kernels/cts_kernels.c, over a
 * one-dimensional grid where element i = get_global_id(0) (block * blockDim + thread).
 *
 * Dynamic shared memory follows the backend's convention: the kernel's last parameter is a
 * __local pointer that receives the launch's dynamicSharedBytes and is not passed in the
 * launch's arguments (block_sum is launched with in, out and n).
 *
 * fail_with_code is absent: an OpenCL C kernel has no way to fail its launch (there is no error
 * return, and a trap would end the whole process on CPU implementations), so the tests that need
 * it skip on this backend.
 */

kernel void fill_u32(global uint* out, uint value, uint n) {
    const size_t i = get_global_id(0);
    if (i < n) out[i] = value;
}

kernel void vadd(global const float* a, global const float* b, global float* c, uint n) {
    const size_t i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}

kernel void block_sum(global const uint* in, global uint* out, uint n, local uint* staged) {
    const size_t i = get_global_id(0);
    const size_t t = get_local_id(0);
    staged[t] = i < n ? in[i] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0) {
        uint sum = 0;
        for (size_t k = 0; k < get_local_size(0); ++k) sum += staged[k];
        out[get_group_id(0)] = sum;
    }
}

kernel void block_index(global uint* out) {
    if (get_local_id(0) != 0 || get_local_id(1) != 0 || get_local_id(2) != 0) return;
    const uint linear = (uint)((get_group_id(2) * get_num_groups(1) + get_group_id(1)) *
                                   get_num_groups(0) +
                               get_group_id(0));
    out[linear] += linear + 1;
}
