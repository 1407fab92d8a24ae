"""The stream examples of PyTorch's documentation ("CUDA semantics", torch.Stream, torch.Event)
re-expressed with polyhal, results checked against numpy."""
import time

import numpy as np
import pytest

import polyhal
from helpers import Gate, random_matrix, require, to_device

M, K, N = 40, 56, 24


def test_side_stream_waits_for_the_default_stream(matmul, rng):
    # s = torch.cuda.Stream()
    # A = torch.empty((100, 100), device=cuda).normal_(0.0, 1.0)
    # s.wait_stream(torch.cuda.default_stream(cuda))
    # with torch.cuda.stream(s):
    #     B = torch.sum(A)
    a, b = random_matrix(rng, M, K), random_matrix(rng, K, N)
    a_in, b_in = to_device(a), to_device(b)
    twice = to_device(2 * np.eye(N, dtype=np.float32))
    s = polyhal.Stream()
    with Gate() as gate:
        gate.hold(polyhal.default_stream())
        product = polyhal.Buffer(M * N * 4)
        matmul(a_in, b_in, product, M, K, N)  # the default stream's work, held by the gate
        s.wait_stream(polyhal.default_stream())
        with polyhal.stream(s):
            doubled = polyhal.Buffer(M * N * 4)
            matmul(product, twice, doubled, M, N, N)
        assert not s.query(), "the side stream ran before the default stream's work it waits for"
        gate.open()
    s.synchronize()
    np.testing.assert_allclose(doubled.to_numpy(np.float32, (M, N), stream=s), 2 * (a @ b),
                               rtol=1e-4, atol=1e-4)


def test_result_of_a_side_stream_used_on_the_current_stream(matmul, rng):
    # s.wait_stream(torch.cuda.current_stream())
    # with torch.cuda.stream(s):
    #     loss.backward(gradient=initial_grad)
    # torch.cuda.current_stream().wait_stream(s)
    # use grads
    a, b = random_matrix(rng, M, K), random_matrix(rng, K, N)
    a_in, b_in = to_device(a), to_device(b)
    s = polyhal.Stream()
    s.wait_stream(polyhal.current_stream())
    with polyhal.stream(s):
        product = polyhal.Buffer(M * N * 4)
        matmul(a_in, b_in, product, M, K, N)
    polyhal.current_stream().wait_stream(s)
    identity = to_device(np.eye(N, dtype=np.float32))
    result = polyhal.Buffer(M * N * 4)
    matmul(product, identity, result, M, N, N)
    np.testing.assert_allclose(result.to_numpy(np.float32, (M, N)), a @ b, rtol=1e-4, atol=1e-4)


def test_event_timing_around_host_side_delay():
    # start_event = torch.cuda.Event(enable_timing=True)
    # end_event = torch.cuda.Event(enable_timing=True)
    # start_event.record()
    # ... run some things here ...
    # end_event.record()
    # torch.cuda.synchronize()
    # elapsed_time_ms = start_event.elapsed_time(end_event)
    require(polyhal.Capability.TIMING_EVENTS)
    require(polyhal.Capability.HOST_FUNCTIONS)
    delay_s = 0.05
    start_event = polyhal.Event(enable_timing=True)
    end_event = polyhal.Event(enable_timing=True)
    start_event.record()
    polyhal.current_stream().launch_host_func(lambda: time.sleep(delay_s))
    end_event.record()
    polyhal.synchronize()
    assert start_event.query() and end_event.query()
    # Only a lower bound: the events enclose a sleep of at least delay_s.
    assert start_event.elapsed_time(end_event) >= 0.9 * delay_s * 1000


def test_stream_record_event_wait_event_query_synchronize(matmul, rng):
    # e = s1.record_event(); s2.wait_event(e); s2.synchronize(); s2.query()
    a, b = random_matrix(rng, M, K), random_matrix(rng, K, N)
    s1, s2 = polyhal.Stream(), polyhal.Stream()
    a_in, b_in = to_device(a, s1), to_device(b, s1)
    product = polyhal.Buffer(M * N * 4, stream=s1)
    with Gate() as gate:
        gate.hold(s1)
        matmul(a_in, b_in, product, M, K, N, stream=s1)
        event = s1.record_event()
        assert isinstance(event, polyhal.Event)
        assert not event.query()
        s2.wait_event(event)
        copy = polyhal.Buffer(M * N * 4, stream=s2)
        copy.copy_from(product, stream=s2)
        assert not s2.query()
        gate.open()
    s2.synchronize()
    assert s2.query() and s1.query() and event.query()
    np.testing.assert_allclose(copy.to_numpy(np.float32, (M, N), stream=s2), a @ b,
                               rtol=1e-4, atol=1e-4)


def test_stream_identity_priority_and_native_handle():
    s = polyhal.Stream()
    assert s == s and s != polyhal.Stream()
    assert polyhal.current_stream() == polyhal.default_stream()
    assert len({s, s, polyhal.default_stream(), polyhal.default_stream()}) == 2
    assert polyhal.default_stream().is_default and not s.is_default
    assert s.device == polyhal.get_device()

    # Lower numbers are higher priorities; out-of-range requests are clamped, as in CUDA.
    highest = polyhal.Stream(priority=-(1 << 40)).priority
    lowest = polyhal.Stream(priority=1 << 40).priority
    assert highest <= 0 <= lowest
    if polyhal.Capability.STREAM_PRIORITIES in polyhal.get_device_properties().capabilities:
        assert highest < lowest

    if polyhal.Capability.NATIVE_HANDLES in polyhal.get_device_properties().capabilities:
        assert isinstance(s.native_handle, int) and s.native_handle != 0
    else:
        with pytest.raises(polyhal.NotSupportedError):
            s.native_handle
