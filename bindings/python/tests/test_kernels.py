"""Modules and kernel launches: a matrix multiply checked against numpy."""
import numpy as np
import pytest

import polyhal
from helpers import random_matrix, to_device


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (8, 8, 8), (17, 5, 29), (64, 33, 48)])
def test_matmul_matches_numpy(matmul, rng, m, k, n):
    a, b = random_matrix(rng, m, k), random_matrix(rng, k, n)
    c = polyhal.Buffer(m * n * 4)
    matmul(to_device(a), to_device(b), c, m, k, n)
    np.testing.assert_allclose(c.to_numpy(np.float32, (m, n)), a @ b, rtol=1e-4, atol=1e-4)


def test_grid_and_block_forms(matmul_module, rng):
    # A single row: grid and block given as plain ints and as 1- and 3-tuples.
    kernel = matmul_module.function("matmul")
    a, b = random_matrix(rng, 1, 4), random_matrix(rng, 4, 32)
    a_in, b_in = to_device(a), to_device(b)
    for grid, block in [(4, 8), ((2,), (16,)), ((1, 1, 1), (32, 1, 1))]:
        c = polyhal.Buffer(32 * 4)
        kernel(grid, block, a_in, b_in, c, np.uint32(1), np.uint32(4), np.uint32(32))
        np.testing.assert_allclose(c.to_numpy(np.float32, (1, 32)), a @ b, rtol=1e-5,
                                   atol=1e-5)


def test_module_from_bytes_on_an_explicit_stream(matmul_path, rng):
    module = polyhal.Module(matmul_path.read_bytes())
    kernel = module.function("matmul")
    assert kernel.name == "matmul"
    s = polyhal.Stream()
    a, b = random_matrix(rng, 8, 8), random_matrix(rng, 8, 8)
    c = polyhal.Buffer(8 * 8 * 4, stream=s)
    kernel((1, 1), (8, 8), to_device(a, s), to_device(b, s), c, np.uint32(8), np.uint32(8),
           np.uint32(8), stream=s)
    np.testing.assert_allclose(c.to_numpy(np.float32, (8, 8), stream=s), a @ b, rtol=1e-5,
                               atol=1e-5)
    module.close()
    with pytest.raises(ValueError, match="module is closed"):
        kernel((1, 1), (8, 8), c, c, c, np.uint32(8), np.uint32(8), np.uint32(8))
    with pytest.raises(ValueError, match="module is closed"):
        module.function("matmul")


def test_function_keeps_its_module_loaded(matmul_path, rng):
    kernel = polyhal.Module(str(matmul_path)).function("matmul")  # the Module is not kept
    a, b = random_matrix(rng, 4, 4), random_matrix(rng, 4, 4)
    c = polyhal.Buffer(4 * 4 * 4)
    kernel((1, 1), (4, 4), to_device(a), to_device(b), c, np.uint32(4), np.uint32(4),
           np.uint32(4))
    np.testing.assert_allclose(c.to_numpy(np.float32, (4, 4)), a @ b, rtol=1e-5, atol=1e-5)


def test_launch_arguments_are_checked(matmul_module):
    kernel = matmul_module.function("matmul")
    c = polyhal.Buffer(64)
    scalars = (np.uint32(1), np.uint32(1), np.uint32(1))
    with pytest.raises(TypeError, match="numpy scalar"):
        kernel(1, 1, c, c, c, 1, 1, 1)  # a Python int has no size
    with pytest.raises(TypeError, match="numpy scalar"):
        kernel(1, 1, c, c, c.ptr, *scalars)
    with pytest.raises(TypeError, match="grid"):
        kernel("1", 1, c, c, c, *scalars)
    with pytest.raises(TypeError, match="block"):
        kernel(1, (1, 1, 1, 1), c, c, c, *scalars)
    with pytest.raises(ValueError, match="grid"):
        kernel((0, 1), 1, c, c, c, *scalars)
    with pytest.raises(ValueError, match="block"):
        kernel(1, -1, c, c, c, *scalars)
    with pytest.raises(ValueError, match="shared_mem"):
        kernel(1, 1, c, c, c, *scalars, shared_mem=-1)
    too_much = polyhal.get_device_properties().max_shared_memory_per_block + 1
    with pytest.raises(polyhal.InvalidValueError):
        kernel(1, 1, c, c, c, *scalars, shared_mem=too_much)
    with pytest.raises(polyhal.InvalidValueError):
        kernel(1, polyhal.get_device_properties().max_threads_per_block + 1, c, c, c, *scalars)
