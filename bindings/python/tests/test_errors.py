"""Failures map to HalError subclasses carrying polyhal's message; misuse raises TypeError or
ValueError before reaching C."""
import sys
import threading

import numpy as np
import pytest

import polyhal


def test_error_carries_code_name_function_and_detail():
    with pytest.raises(polyhal.InvalidDeviceError) as info:
        polyhal.set_device(polyhal.device_count() + 5)
    error = info.value
    assert isinstance(error, polyhal.HalError)
    assert error.code == 11 and error.name == "HAL_ERROR_INVALID_DEVICE"
    assert error.function == "halSetDevice"
    assert error.detail  # halGetLastErrorMessage() of the failed call
    assert str(error) == f"halSetDevice: HAL_ERROR_INVALID_DEVICE: {error.detail}"


def test_each_code_has_its_own_exception_class():
    classes = [getattr(polyhal, name) for name in polyhal.__all__ if name.endswith("Error")]
    codes = {cls.code for cls in classes if cls is not polyhal.HalError}
    assert len(codes) == len(classes) - 1
    assert all(issubclass(cls, polyhal.HalError) for cls in classes)


def test_errors_of_the_library_are_mapped(matmul_module):
    with pytest.raises(polyhal.NotFoundError, match="no_such_kernel"):
        matmul_module.function("no_such_kernel")
    with pytest.raises(polyhal.InvalidImageError):
        polyhal.Module(b"\x00\x01 neither a shared object nor source")
    with pytest.raises(polyhal.InvalidValueError):
        polyhal.Module("/nonexistent/kernels.so")
    with pytest.raises(polyhal.OutOfMemoryError):
        polyhal.Buffer(1 << 62)
    untimed = polyhal.Event()
    untimed.record()
    untimed.synchronize()
    with pytest.raises(polyhal.InvalidValueError):
        untimed.elapsed_time(untimed)
    never_recorded = polyhal.Event(enable_timing=True)
    with pytest.raises(polyhal.InvalidValueError):
        never_recorded.elapsed_time(never_recorded)


def test_a_bad_launch_fails_at_launch_or_at_the_next_synchronisation(matmul_module):
    kernel = matmul_module.function("matmul")
    c = polyhal.Buffer(64)
    s = polyhal.Stream()
    wrong_size = np.uint64(1)  # the kernel takes uint32 dimensions
    try:
        kernel(1, 1, c, c, c, wrong_size, np.uint32(1), np.uint32(1), stream=s)
    except polyhal.InvalidValueError:
        return  # OpenCL checks argument sizes when it sets them
    with pytest.raises(polyhal.LaunchFailedError, match="matmul"):
        s.synchronize()
    s.synchronize()  # an asynchronous error is reported once


def test_misuse_raises_type_or_value_error():
    s = polyhal.Stream()
    e = polyhal.Event()
    for call in (lambda: polyhal.Stream(priority="high"), lambda: polyhal.Stream(device=0.5),
                 lambda: polyhal.set_device(1.0), lambda: polyhal.set_device(True),
                 lambda: e.record("stream"), lambda: s.wait_event(s), lambda: s.wait_stream(e),
                 lambda: e.elapsed_time(1.5), lambda: polyhal.Buffer("64"),
                 lambda: polyhal.Module(42), lambda: polyhal.StreamCtx(5),
                 lambda: polyhal.set_cur_stream(None), lambda: s.launch_host_func(42),
                 lambda: polyhal.Buffer(16, stream=e), lambda: s.record_event(s),
                 lambda: polyhal.Buffer(16).copy_from(np.array([object()]))):
        with pytest.raises(TypeError):
            call()
    # Values C cannot represent are refused instead of being truncated.
    for call in (lambda: polyhal.Buffer(0), lambda: polyhal.Buffer(1 << 64),
                 lambda: polyhal.set_device(1 << 40), lambda: polyhal.memory_stats(-(1 << 40))):
        with pytest.raises(ValueError):
            call()
    with pytest.raises(ValueError, match="default stream cannot be closed"):
        polyhal.default_stream().close()


def test_closed_objects_raise_value_error():
    s, e = polyhal.Stream(), polyhal.Event()
    s.close()
    e.close()
    s.close()  # closing again does nothing
    assert s.closed and e.closed
    for call in (s.query, s.synchronize, s.record_event, lambda: s.wait_event(polyhal.Event()),
                 lambda: polyhal.Stream().wait_stream(s), lambda: s.native_handle,
                 lambda: s.launch_host_func(print), lambda: polyhal.Buffer(8, stream=s),
                 lambda: polyhal.StreamCtx(s), lambda: polyhal.set_cur_stream(s),
                 e.query, e.synchronize, e.record, lambda: polyhal.Stream().wait_event(e),
                 lambda: polyhal.Event(enable_timing=True).elapsed_time(e)):
        with pytest.raises(ValueError, match="is closed"):
            call()


def test_exception_in_a_host_function_is_reported_and_the_stream_goes_on(monkeypatch):
    if polyhal.Capability.HOST_FUNCTIONS not in polyhal.get_device_properties().capabilities:
        pytest.skip("the backend lacks HOST_FUNCTIONS")
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    ran_after = threading.Event()
    s = polyhal.Stream()

    def fails():
        raise KeyError("inside a host function")

    s.launch_host_func(fails)
    s.launch_host_func(ran_after.set)
    s.synchronize()
    assert ran_after.is_set()
    assert len(reported) == 1 and reported[0].exc_type is KeyError


@pytest.mark.misuse  # the api check reports each refused call
def test_a_host_function_may_not_call_into_the_device():
    if polyhal.Capability.HOST_FUNCTIONS not in polyhal.get_device_properties().capabilities:
        pytest.skip("the backend lacks HOST_FUNCTIONS")
    seen = {}

    def inside():
        try:
            polyhal.Buffer(64)
        except polyhal.HalError as error:
            seen["allocation"] = error
        seen["properties"] = polyhal.get_device_properties()  # allowed: no device access
        seen["stats"] = polyhal.memory_stats()

    s = polyhal.Stream()
    s.launch_host_func(inside)
    s.synchronize()
    error = seen["allocation"]
    assert isinstance(error, polyhal.NotPermittedError)
    assert error.code == 14 and error.name == "HAL_ERROR_NOT_PERMITTED"
    assert "host function" in error.detail
    assert seen["properties"] == polyhal.get_device_properties()
    assert "bytes_in_use" in seen["stats"]


def test_a_buffer_last_held_by_a_host_function_is_released_afterwards(monkeypatch):
    if polyhal.Capability.HOST_FUNCTIONS not in polyhal.get_device_properties().capabilities:
        pytest.skip("the backend lacks HOST_FUNCTIONS")
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    s = polyhal.Stream()
    s.synchronize()
    in_use = polyhal.memory_stats()["bytes_in_use"]
    buffer = polyhal.Buffer(1 << 20, stream=s)
    s.launch_host_func(lambda kept=buffer: None)
    del buffer  # the host function holds the last reference, and drops it where halFree fails
    s.synchronize()
    s.launch_host_func(lambda: None)  # a later launch releases it
    s.synchronize()
    assert polyhal.memory_stats()["bytes_in_use"] == in_use
    assert reported == []
