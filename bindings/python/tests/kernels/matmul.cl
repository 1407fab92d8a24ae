/*
 * The Python binding tests' kernel in OpenCL C; matmul.c is the same kernel for the CPU backend.
 *
 *   matmul(a, b, c, m, k, n): c = a @ b for row-major a (m x k), b (k x n), c (m x n), over a
 *   two-dimensional grid: column = get_global_id(0), row = get_global_id(1).
 */
kernel void matmul(global const float* a, global const float* b, global float* c, uint m,
                   uint k, uint n) {
    const size_t column = get_global_id(0);
    const size_t row = get_global_id(1);
    if (row >= m || column >= n) return;
    float sum = 0.0f;
    for (uint i = 0; i < k; ++i) sum += a[row * k + i] * b[i * n + column];
    c[row * n + column] = sum;
}
