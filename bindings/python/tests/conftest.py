"""Fixtures of the polyhal Python tests: the test kernel for the backend in use.

The CPU kernel is built by CMake (target polyhal_python_test_kernels) into
<build>/kernels/python/matmul.so: POLYHAL_TEST_KERNEL_DIR names that folder; unset, it is found
from POLYHAL_LIBRARY (<build>/lib/libpolyhal.so). The OpenCL kernel is OpenCL C source, loaded
from this folder.
"""
import os
import pathlib

import numpy as np
import pytest

import polyhal
from helpers import require

KERNEL_SOURCES = pathlib.Path(__file__).parent / "kernels"
BLOCK = (8, 8)  # threads per block of the matmul launches


def pytest_report_header(config):
    props = polyhal.get_device_properties()
    return (f"polyhal {polyhal.__file__}: backend {props.backend}, "
            f"{polyhal.device_count()} device(s), device 0 '{props.name}', "
            f"capabilities {props.capabilities!r}")


def _cpu_kernel_dir():
    explicit = os.environ.get("POLYHAL_TEST_KERNEL_DIR")
    if explicit:
        return pathlib.Path(explicit)
    library = os.environ.get("POLYHAL_LIBRARY")
    if not library:
        pytest.fail("set POLYHAL_TEST_KERNEL_DIR to <build>/kernels/python")
    return pathlib.Path(library).resolve().parent.parent / "kernels" / "python"


@pytest.fixture(scope="session")
def matmul_path():
    """The file of the matmul kernel for the current backend."""
    require(polyhal.Capability.KERNELS)
    backend = polyhal.backend()
    if backend == "cpu":
        path = _cpu_kernel_dir() / "matmul.so"
        if not path.exists():
            pytest.fail(f"{path} is missing: build the CMake target polyhal_python_test_kernels")
        return path
    if backend == "opencl":
        return KERNEL_SOURCES / "matmul.cl"
    pytest.skip(f"the tests have no matmul kernel for backend '{backend}'")


@pytest.fixture(scope="session")
def matmul_module(matmul_path):
    module = polyhal.Module(str(matmul_path))
    yield module
    module.close()


@pytest.fixture
def matmul(matmul_module):
    """launch(a, b, c, m, k, n, stream=None): enqueues c = a @ b for float32 buffers."""
    kernel = matmul_module.function("matmul")

    def launch(a, b, c, m, k, n, stream=None):
        grid = (-(-n // BLOCK[0]), -(-m // BLOCK[1]))
        kernel(grid, BLOCK, a, b, c, np.uint32(m), np.uint32(k), np.uint32(n), stream=stream)

    return launch


@pytest.fixture(autouse=True)
def nothing_found_by_checked_mode(request):
    """Under POLYHAL_CHECK (docs/check.md) a test fails if checked mode reports anything during
    it, unless it is marked as misusing polyhal on purpose."""
    if not os.environ.get("POLYHAL_CHECK") or request.node.get_closest_marker("misuse"):
        yield
        return
    before = polyhal.check_findings()
    yield
    found = polyhal.check_findings() - before
    assert found == 0, f"checked mode reported {found} finding(s) during the test (see stderr)"


def pytest_configure(config):
    config.addinivalue_line("markers", "misuse: the test misuses polyhal on purpose, so checked "
                                       "mode's findings during it are expected")


@pytest.fixture
def rng():
    return np.random.default_rng(7)
