"""Pinned host buffers and asynchronous copies (torch's pin_memory() and non_blocking=True,
Paddle's pinned places): the copy is enqueued, the host buffer outlives it, and plain host memory
is still copied synchronously."""
import gc
import weakref

import numpy as np
import pytest

import polyhal
from helpers import Gate, require


def pattern(seed, nbytes=1 << 16):
    return (np.arange(nbytes, dtype=np.uint32) * 2654435761 + seed).astype(np.uint8)


def test_round_trip_through_pinned_buffers_asynchronously():
    data = pattern(7)
    source, result = polyhal.HostBuffer(data.nbytes), polyhal.HostBuffer(data.nbytes)
    source.numpy()[:] = data
    stream = polyhal.Stream()
    device = polyhal.Buffer(data.nbytes, stream=stream)
    device.copy_from(source, stream=stream, non_blocking=True)
    device.copy_to(result, stream=stream, non_blocking=True)
    stream.synchronize()
    assert np.array_equal(result.numpy(), data)
    # A numpy view of a host buffer is pinned memory too, whatever its dtype and shape.
    view = result.numpy(np.uint32, (4, -1))
    device.copy_to(view, stream=stream, non_blocking=True)
    stream.synchronize()
    assert np.array_equal(view.view(np.uint8).ravel(), data)


def test_a_copy_from_pinned_memory_returns_while_its_stream_is_held_and_keeps_the_memory():
    require(polyhal.Capability.HOST_FUNCTIONS)
    data = pattern(11)
    source = polyhal.HostBuffer(data.nbytes)
    source.numpy()[:] = data
    stream = polyhal.Stream()
    device = polyhal.Buffer(data.nbytes, stream=stream)
    with Gate() as gate:
        gate.hold(stream)
        device.copy_from(source, stream=stream, non_blocking=True)  # returns: the gate holds
        assert not stream.query()
        alive = weakref.ref(source)
        del source
        gc.collect()
        assert alive() is not None, "a host buffer was freed while a copy still reads it"
        gate.open()
    out = np.empty_like(data)
    device.copy_to(out, stream=stream)
    assert np.array_equal(out, data)
    # Once its copy has completed, the next asynchronous copy lets it go.
    polyhal.HostBuffer(16)
    other = polyhal.HostBuffer(16)
    polyhal.Buffer(16, stream=stream).copy_from(other, stream=stream, non_blocking=True)
    gc.collect()
    assert alive() is None


def test_pageable_memory_is_copied_synchronously_even_when_non_blocking():
    data = pattern(3)
    stream = polyhal.Stream()
    device = polyhal.Buffer(data.nbytes, stream=stream)
    host = data.copy()
    device.copy_from(host, stream=stream, non_blocking=True)
    host[:] = 0  # the copy has run: the caller may reuse its memory at once
    assert np.array_equal(device.to_numpy(stream=stream), data)
    target = np.zeros_like(data)
    device.copy_to(target, stream=stream, non_blocking=True)
    assert np.array_equal(target, data)


def test_host_buffers_export_through_dlpack_and_refuse_misuse():
    host = polyhal.HostBuffer(64)
    assert host.__dlpack_device__() == (3, 0)  # kDLCPUPinned
    capsule = host.__dlpack__()
    with pytest.raises(ValueError, match="exported"):
        host.close()
    del capsule
    gc.collect()
    host.close()
    host.close()  # closing twice does nothing
    with pytest.raises(ValueError):
        host.numpy()
    for wrong in ("64", 1.5):
        with pytest.raises(TypeError):
            polyhal.HostBuffer(wrong)
    with pytest.raises(ValueError):
        polyhal.HostBuffer(0)
    device = polyhal.Buffer(64)
    with pytest.raises(TypeError):
        device.copy_to(b"64 bytes")
    with pytest.raises(ValueError):
        device.copy_to(np.zeros((8, 8), np.uint8)[:, ::2])
