"""Checked mode from Python (docs/check.md): races reported with the program's own line, the
finding count, and kernel launches that declare how they use their arguments."""
import os
import subprocess
import sys

import numpy as np
import pytest

import polyhal
from helpers import random_matrix, to_device

# PyTorch's side-stream example: the main stream produces b, the side stream consumes it.
SIDE_STREAM = """\
import polyhal
a, b, c = polyhal.Buffer(4096), polyhal.Buffer(4096), polyhal.Buffer(4096)
a.copy_from(bytes(4096))
main, side = polyhal.current_stream(), polyhal.Stream()
b.copy_from(a, stream=main)
{wait}
c.copy_from(b, stream=side)
main.synchronize()
side.synchronize()
print("findings:", polyhal.check_findings(), sorted(polyhal.check_enabled()))
for resource in (a, b, c, side):
    resource.close()  # else the leak check names them at exit
"""


def run_checked(tmp_path, source, checks="races,leaks,api", args=()):
    script = tmp_path / "program.py"
    script.write_text(source)
    env = dict(os.environ, POLYHAL_CHECK=checks)
    return script, subprocess.run([sys.executable, str(script), *args], env=env,
                                  capture_output=True, text=True, timeout=120)


def test_a_side_stream_without_wait_stream_is_reported_at_its_python_line(tmp_path):
    script, result = run_checked(tmp_path, SIDE_STREAM.format(wait=""))
    assert result.returncode == 0, result.stderr
    assert "findings: 1 ['api', 'leaks', 'races']" in result.stdout
    report = result.stderr
    assert "check (race): read-after-write race on 4096 bytes" in report
    assert "earlier: halMemcpyAsync" in report and "(write)" in report
    assert "later:   halMemcpyAsync" in report and "(read), not ordered" in report
    # Both operations at the lines that submitted them (5 and 7), and the allocation at 2.
    assert f"python: {script}:5 in <module>" in report
    assert f"python: {script}:7 in <module>" in report
    assert f"python: {script}:2 in <module>" in report


# A race between two calls made from C (here through ctypes, below the binding) after Python
# calls on the same thread: their reports quote no Python line.
FROM_C_AFTER_PYTHON = """\
import ctypes
import polyhal
from polyhal import _capi
a = polyhal.Buffer(4096)
s1, s2 = polyhal.Stream(), polyhal.Stream()
library = _capi.hal._library
library.halMemsetAsync(ctypes.c_void_p(a.ptr), 4096, 1, 4096, ctypes.c_void_p(s1._handle))
library.halMemsetAsync(ctypes.c_void_p(a.ptr), 4096, 2, 4096, ctypes.c_void_p(s2._handle))
s1.synchronize()
s2.synchronize()
print("findings:", polyhal.check_findings())
for resource in (a, s1, s2):
    resource.close()
"""


def test_calls_from_c_after_python_quote_no_python_line(tmp_path):
    script, result = run_checked(tmp_path, FROM_C_AFTER_PYTHON)
    assert result.returncode == 0, result.stderr
    assert "findings: 1" in result.stdout
    report = result.stderr
    assert "earlier: halMemsetAsync" in report and "later:   halMemsetAsync" in report
    # The block was allocated from Python (line 4); the two memsets were not.
    assert f"python: {script}:4 in <module>" in report
    assert f"python: {script}:5 in <module>" not in report
    assert f"python: {script}:8 in <module>" not in report


def test_the_same_program_with_wait_stream_reports_nothing(tmp_path):
    _, result = run_checked(tmp_path, SIDE_STREAM.format(wait="side.wait_stream(main)"))
    assert result.returncode == 0, result.stderr
    assert "findings: 0" in result.stdout
    assert "check (" not in result.stderr


def test_checked_mode_is_off_unless_asked_for(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(SIDE_STREAM.format(wait=""))
    env = {k: v for k, v in os.environ.items() if k != "POLYHAL_CHECK"}
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "findings: 0 []" in result.stdout
    assert "check (" not in result.stderr


def test_a_launch_declares_how_it_uses_its_arguments(matmul_module, rng):
    kernel = matmul_module.function("matmul")
    m = k = n = 8
    a, b = random_matrix(rng, m, k), random_matrix(rng, k, n)
    c = polyhal.Buffer(m * n * 4)
    grid = (1, 1)
    kernel(grid, (8, 8), to_device(a), to_device(b), c, np.uint32(m), np.uint32(k), np.uint32(n),
           access=("r", "r", "w", None, None, None))
    np.testing.assert_allclose(c.to_numpy(np.float32, (m, n)), a @ b, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="access has 2 entries for 6 kernel arguments"):
        kernel(grid, (8, 8), to_device(a), to_device(b), c, np.uint32(m), np.uint32(k),
               np.uint32(n), access=("r", "r"))
    with pytest.raises(ValueError, match=r"access\[1\] is 'x'"):
        kernel(grid, (8, 8), to_device(a), to_device(b), c, np.uint32(m), np.uint32(k),
               np.uint32(n), access=("r", "x", "w", None, None, None))


READ_ONLY_INPUTS = """\
import sys
import numpy as np
import polyhal
module = polyhal.Module(sys.argv[1])
kernel = module.function("matmul")
a, b = polyhal.Buffer(256), polyhal.Buffer(256)
a.copy_from(np.ones(64, np.float32))
b.copy_from(np.ones(64, np.float32))
s1, s2 = polyhal.Stream(), polyhal.Stream()
c1, c2 = polyhal.Buffer(256, stream=s1), polyhal.Buffer(256, stream=s2)
for stream, c in ((s1, c1), (s2, c2)):
    kernel((1, 1), (8, 8), a, b, c, np.uint32(8), np.uint32(8), np.uint32(8), stream=stream,
           access={access})
s1.synchronize()
s2.synchronize()
print("findings:", polyhal.check_findings())
"""


@pytest.mark.parametrize("access, findings", [("('r', 'r', 'w', None, None, None)", 0),
                                              ("None", 1)])
def test_two_streams_reading_one_input_race_only_if_not_declared_read_only(
        tmp_path, matmul_path, access, findings):
    script, result = run_checked(tmp_path, READ_ONLY_INPUTS.format(access=access), "races",
                                 [str(matmul_path)])
    assert result.returncode == 0, result.stderr
    assert f"findings: {findings}" in result.stdout, result.stderr
    if findings:
        assert "write-after-write race" in result.stderr
        assert f"python: {script}:12 in <module>" in result.stderr


# The rows of one output split between two streams, each launch writing its own half through a
# pointer into the buffer (CUDA's simpleStreams pattern).
SPLIT_ROWS = """\
import sys
import numpy as np
import polyhal
module = polyhal.Module(sys.argv[1])
kernel = module.function("matmul")
a, b, c = polyhal.Buffer(256), polyhal.Buffer(256), polyhal.Buffer(256)
a.copy_from(np.ones(64, np.float32))
b.copy_from(np.ones(64, np.float32))
streams = polyhal.Stream(), polyhal.Stream()
for half, stream in enumerate(streams):
    rows = np.uint64(a.ptr + half * 128), np.uint64(c.ptr + half * 128)
    kernel((1, 1), (8, 8), rows[0], b, rows[1], np.uint32(4), np.uint32(8), np.uint32(8),
           stream=stream, access=("r", "r", "w", None, None, None), extents={extents})
for stream in streams:
    stream.synchronize()
print("findings:", polyhal.check_findings(), c.to_numpy(np.float32)[[0, 63]])
"""


@pytest.mark.parametrize("extents, findings", [("(128, 256, 128, None, None, None)", 0),
                                               ("None", 1)])
def test_kernels_writing_their_own_slice_race_only_without_extents(tmp_path, matmul_path,
                                                                    extents, findings):
    _, result = run_checked(tmp_path, SPLIT_ROWS.format(extents=extents), "races",
                            [str(matmul_path)])
    assert result.returncode == 0, result.stderr
    assert f"findings: {findings}" in result.stdout, result.stderr
    assert "[8. 8.]" in result.stdout
    if findings:
        assert "without a declared extent" in result.stderr


def test_extents_must_be_byte_counts(matmul_module):
    kernel = matmul_module.function("matmul")
    a, b, c = polyhal.Buffer(256), polyhal.Buffer(256), polyhal.Buffer(256)
    with pytest.raises(ValueError, match="extents has 1 entries for 6 kernel arguments"):
        kernel((1, 1), (8, 8), a, b, c, np.uint32(8), np.uint32(8), np.uint32(8),
               extents=(256,))
    with pytest.raises(ValueError, match=r"extents\[2\] is -1"):
        kernel((1, 1), (8, 8), a, b, c, np.uint32(8), np.uint32(8), np.uint32(8),
               extents=(256, 256, -1, None, None, None))
