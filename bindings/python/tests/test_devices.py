"""Devices: count, selection, properties; default streams of other devices."""
import gc
import os

import pytest

import polyhal
from helpers import run_python


def test_device_queries():
    count = polyhal.device_count()
    assert count >= 1
    assert 0 <= polyhal.get_device() < count
    props = polyhal.get_device_properties()
    assert props == polyhal.get_device_properties(polyhal.get_device())
    assert props.backend == polyhal.backend()
    named = os.environ.get("POLYHAL_BACKEND", "")
    if named.isidentifier():  # one backend named, not a list or a path
        assert props.backend == named
    assert props.ordinal == polyhal.get_device() and props.name
    assert props.total_memory > 0 and props.compute_units > 0
    assert props.max_threads_per_block > 0
    assert isinstance(props.capabilities, polyhal.Capability)
    polyhal.set_device(polyhal.get_device())
    polyhal.synchronize()
    with pytest.raises(polyhal.InvalidDeviceError):
        polyhal.get_device_properties(count)
    with pytest.raises(polyhal.InvalidDeviceError):
        polyhal.default_stream(count)
    with pytest.raises(polyhal.InvalidDeviceError):
        polyhal.Stream(device=count)


def test_default_stream_of_another_device_works_from_any_current_device():
    if polyhal.backend() != "cpu":
        pytest.skip("two devices are made with POLYHAL_CPU_DEVICES, a CPU-backend setting")
    result = run_python("""
        import numpy as np
        import polyhal
        assert polyhal.device_count() == 2 and polyhal.get_device() == 0
        other = polyhal.default_stream(1)
        buffer = polyhal.Buffer(1 << 20, stream=other)  # on device 1's pool
        assert polyhal.get_device() == 0
        assert polyhal.memory_stats(1)["bytes_in_use"] >= 1 << 20
        assert polyhal.memory_stats(0)["bytes_in_use"] == 0
        buffer.copy_from(np.arange(8, dtype=np.int64), stream=other)
        assert buffer.to_numpy(np.int64, (8,), stream=other).tolist() == list(range(8))
        event = polyhal.Event(device=0)
        with polyhal.stream(polyhal.Stream(device=1)) as s:
            assert polyhal.get_device() == 1 and s.device == 1
            assert polyhal.current_stream() == s
            assert polyhal.current_stream(0) == polyhal.default_stream(0)
        assert polyhal.get_device() == 0
        try:
            event.record(other)  # an event of device 0 on a stream of device 1
        except polyhal.InvalidValueError:
            print("ok")
        """, POLYHAL_BACKEND="cpu", POLYHAL_CPU_DEVICES="2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_mem_get_info_reports_total_and_free_shrinking_with_use():
    props = polyhal.get_device_properties()
    # Buffers of earlier tests left in reference cycles go now, not while this test measures.
    gc.collect()
    polyhal.synchronize()
    polyhal.empty_cache()
    free_before, total = polyhal.mem_get_info()
    assert total == props.total_memory
    assert 0 <= free_before <= total
    size = 64 << 20
    if free_before < 2 * size:
        pytest.skip("less than 128 MiB free")
    held = polyhal.Buffer(size)
    free_after, _ = polyhal.mem_get_info(polyhal.get_device())
    assert free_after + size <= free_before
    del held
    with pytest.raises(polyhal.InvalidDeviceError):
        polyhal.mem_get_info(polyhal.device_count())


def test_peer_access_between_two_cpu_devices():
    if polyhal.backend() != "cpu":
        pytest.skip("two devices are made with POLYHAL_CPU_DEVICES, a CPU-backend setting")
    result = run_python("""
        import polyhal
        assert polyhal.can_device_access_peer(0, 1) and polyhal.can_device_access_peer(1, 0)
        assert not polyhal.can_device_access_peer(0, 0)
        polyhal.enable_peer_access(1)
        polyhal.enable_peer_access(1)  # again: allowed, no change
        polyhal.disable_peer_access(1)
        try:
            polyhal.disable_peer_access(1)
        except polyhal.InvalidValueError:
            print("ok")
        """, POLYHAL_BACKEND="cpu", POLYHAL_CPU_DEVICES="2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
