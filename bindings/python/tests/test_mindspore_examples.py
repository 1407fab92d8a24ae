"""The examples of mindspore.hal (Stream, StreamCtx, Event, synchronize, current_stream,
set_cur_stream) re-expressed with polyhal, results checked against numpy."""
import time

import numpy as np

import polyhal
from helpers import random_matrix, require, to_device

M, K, N = 32, 48, 40


def test_matmul_on_a_stream_then_device_synchronize(matmul, rng):
    # s1 = ms.hal.Stream()
    # with ms.hal.StreamCtx(s1):
    #     c = ops.matmul(a, b)
    # ms.hal.synchronize()
    # assert s1.query()
    a, b = random_matrix(rng, M, K), random_matrix(rng, K, N)
    s1 = polyhal.Stream()
    with polyhal.StreamCtx(s1):
        assert polyhal.current_stream() == s1
        a_in, b_in = to_device(a), to_device(b)
        c = polyhal.Buffer(M * N * 4)
        matmul(a_in, b_in, c, M, K, N)
    assert polyhal.current_stream() == polyhal.default_stream()
    polyhal.synchronize()
    assert s1.query()
    np.testing.assert_allclose(c.to_numpy(np.float32, (M, N), stream=s1), a @ b,
                               rtol=1e-4, atol=1e-4)


def test_record_event_then_wait_event(matmul, rng):
    # with ms.hal.StreamCtx(s1):
    #     c = ops.matmul(a, b)
    #     ev = s1.record_event()
    # s2.wait_event(ev)
    # with ms.hal.StreamCtx(s2):
    #     d = ops.matmul(c, b)
    # ms.hal.synchronize()
    a, b = random_matrix(rng, M, K), random_matrix(rng, K, K)
    s1, s2 = polyhal.Stream(), polyhal.Stream()
    with polyhal.StreamCtx(s1):
        a_in, b_in = to_device(a), to_device(b)
        c = polyhal.Buffer(M * K * 4)
        matmul(a_in, b_in, c, M, K, K)
        ev = s1.record_event()
    s2.wait_event(ev)
    with polyhal.StreamCtx(s2):
        d = polyhal.Buffer(M * K * 4)
        matmul(c, b_in, d, M, K, K)
    polyhal.synchronize()
    np.testing.assert_allclose(d.to_numpy(np.float32, (M, K), stream=s2), (a @ b) @ b,
                               rtol=1e-3, atol=1e-3)


def test_wait_stream(matmul, rng):
    # with ms.hal.StreamCtx(s1):
    #     c = ops.matmul(a, b)
    # s2.wait_stream(s1)
    # with ms.hal.StreamCtx(s2):
    #     d = ops.matmul(c, b)
    a, b = random_matrix(rng, M, K), random_matrix(rng, K, K)
    s1, s2 = polyhal.Stream(), polyhal.Stream()
    with polyhal.StreamCtx(s1):
        a_in, b_in = to_device(a), to_device(b)
        c = polyhal.Buffer(M * K * 4)
        matmul(a_in, b_in, c, M, K, K)
    s2.wait_stream(s1)
    with polyhal.StreamCtx(s2):
        d = polyhal.Buffer(M * K * 4)
        matmul(c, b_in, d, M, K, K)
        result = d.to_numpy(np.float32, (M, K))  # on s2, the current stream
    np.testing.assert_allclose(result, (a @ b) @ b, rtol=1e-3, atol=1e-3)


def test_event_elapsed_time():
    # start = ms.hal.Event(enable_timing=True)
    # end = ms.hal.Event(enable_timing=True)
    # start.record(s1)
    # with ms.hal.StreamCtx(s1): ...
    # end.record(s1)
    # end.synchronize()
    # elapsed_time = start.elapsed_time(end)
    require(polyhal.Capability.TIMING_EVENTS)
    require(polyhal.Capability.HOST_FUNCTIONS)
    delay_s = 0.03
    s1 = polyhal.Stream()
    start, end = polyhal.Event(enable_timing=True), polyhal.Event(enable_timing=True)
    start.record(s1)
    s1.launch_host_func(lambda: time.sleep(delay_s))
    end.record(s1)
    end.synchronize()
    assert end.query()
    assert start.elapsed_time(end) >= 0.9 * delay_s * 1000  # a lower bound only


def test_set_cur_stream_and_current_stream():
    # ms.hal.set_cur_stream(s1); assert ms.hal.current_stream() == s1
    s1 = polyhal.Stream()
    previous = polyhal.set_cur_stream(s1)
    try:
        assert previous == polyhal.default_stream()
        assert polyhal.current_stream() == s1
        event = polyhal.Event()
        event.record()  # on the current stream
        polyhal.current_stream().synchronize()
        assert event.query()
    finally:
        polyhal.set_cur_stream(previous)
    assert polyhal.current_stream() == polyhal.default_stream()
