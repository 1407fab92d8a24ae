"""The examples of paddle.device (Stream, Event, stream_guard, current_stream, set_stream)
re-expressed with polyhal, results checked against numpy."""
import numpy as np

import polyhal
from helpers import Gate, random_matrix, to_device

M, K, N = 24, 32, 16


def test_event_record_and_wait_between_two_streams(matmul, rng):
    # s1 = paddle.device.Stream(); s2 = paddle.device.Stream()
    # e = paddle.device.Event()
    # e.record(s1)
    # s2.wait_event(e)
    a, b = random_matrix(rng, M, K), random_matrix(rng, K, N)
    s1, s2 = polyhal.Stream(), polyhal.Stream()
    a_in, b_in = to_device(a, s1), to_device(b, s1)
    c = polyhal.Buffer(M * N * 4, stream=s1)
    e = polyhal.Event()
    with Gate() as gate:
        gate.hold(s1)
        matmul(a_in, b_in, c, M, K, N, stream=s1)
        e.record(s1)
        e.wait(s2)  # the same as s2.wait_event(e)
        out = polyhal.Buffer(M * N * 4, stream=s2)
        out.copy_from(c, stream=s2)
        assert not e.query() and not s2.query()
        gate.open()
    e.synchronize()
    assert e.query()
    s2.synchronize()
    np.testing.assert_allclose(out.to_numpy(np.float32, (M, N), stream=s2), a @ b,
                               rtol=1e-4, atol=1e-4)


def test_two_streams_computing_independently_then_joined(matmul, rng):
    # with paddle.device.stream_guard(s1): x = ...
    # with paddle.device.stream_guard(s2): y = ...
    # paddle.device.current_stream().wait_stream(s1); ...wait_stream(s2); z = x + y
    a, b = random_matrix(rng, M, K), random_matrix(rng, K, N)
    c = random_matrix(rng, N, N)
    s1, s2 = polyhal.Stream(), polyhal.Stream()
    with polyhal.stream(s1):
        x = polyhal.Buffer(M * N * 4)
        matmul(to_device(a), to_device(b), x, M, K, N)
    with polyhal.stream(s2):
        y = polyhal.Buffer(M * N * 4)
        matmul(to_device(a), to_device(b @ c), y, M, K, N)
    polyhal.current_stream().wait_stream(s1)
    polyhal.current_stream().wait_stream(s2)
    z = polyhal.Buffer(M * N * 4)
    matmul(x, to_device(c), z, M, N, N)
    np.testing.assert_allclose(z.to_numpy(np.float32, (M, N)), y.to_numpy(np.float32, (M, N)),
                               rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(z.to_numpy(np.float32, (M, N)), (a @ b) @ c, rtol=1e-3,
                               atol=1e-3)


def test_stream_guard_nests_and_restores():
    # with paddle.device.stream_guard(s): assert paddle.device.current_stream() == s
    s1, s2 = polyhal.Stream(), polyhal.Stream()
    guard = polyhal.stream(s1)
    with guard as entered:
        assert entered is s1 and polyhal.current_stream() == s1
        with polyhal.stream(s2):
            assert polyhal.current_stream() == s2
            with guard:  # the same guard entered twice restores each level
                assert polyhal.current_stream() == s1
            assert polyhal.current_stream() == s2
        assert polyhal.current_stream() == s1
        with polyhal.stream(None):  # stream_guard(None) changes nothing
            assert polyhal.current_stream() == s1
    assert polyhal.current_stream() == polyhal.default_stream()


def test_query_and_synchronize_of_idle_and_busy_streams():
    # s.query(); s.synchronize(); e.query(); e.synchronize()
    s = polyhal.Stream()
    never_recorded = polyhal.Event()
    assert s.query() and never_recorded.query()
    never_recorded.synchronize()
    with Gate() as gate:
        gate.hold(s)
        e = s.record_event()
        assert not s.query() and not e.query()
        gate.open()
    s.synchronize()
    assert s.query() and e.query()
