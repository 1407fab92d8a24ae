"""Helpers shared by the polyhal Python tests."""
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import polyhal


def require(capability):
    """Skips the calling test, with the reason printed under -rs, when the current device lacks
    `capability`."""
    props = polyhal.get_device_properties()
    if capability not in props.capabilities:
        pytest.skip(f"backend '{props.backend}' lacks {capability.name}")


def run_python(script, **environment):
    """Runs `script` in a fresh interpreter (polyhal initialises once per process)."""
    env = dict(os.environ, **environment)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=env,
                          capture_output=True, text=True, timeout=120)


def to_device(array, stream=None):
    """A new Buffer holding `array`'s bytes, allocated and filled in the order of `stream`."""
    buffer = polyhal.Buffer(array.nbytes, stream=stream)
    buffer.copy_from(array, stream=stream)
    return buffer


class Gate:
    """Holds streams at a point until opened, so a test can observe what must wait: hold(s)
    enqueues a host function that blocks until open(). Leaving the `with` block opens it, so a
    failing test never leaves a stream blocked; the host function also gives up after 60 s."""

    def __init__(self):
        self._opened = threading.Event()

    def hold(self, stream):
        require(polyhal.Capability.HOST_FUNCTIONS)
        stream.launch_host_func(lambda: self._opened.wait(60))

    def open(self):
        self._opened.set()

    def is_open(self):
        return self._opened.is_set()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.open()
        return False


def random_matrix(rng, rows, columns):
    return rng.standard_normal((rows, columns), dtype=np.float32)
