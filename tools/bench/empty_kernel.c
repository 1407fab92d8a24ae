/*
 * The CPU backend's empty kernel for opencl_bench.cpp: the counterpart of its OpenCL C kernel
 * `kernel void empty(global uint* data, uint n) {}`, launched with the same two arguments.
 */
#include <polyhal/cpu_kernel.h>

HAL_CPU_KERNEL(empty) {
    (void)ctx;
    return 0;
}
