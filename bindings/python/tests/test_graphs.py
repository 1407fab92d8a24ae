"""polyhal.Graph and polyhal.graph, as PyTorch's documentation uses torch.cuda.CUDAGraph and
torch.cuda.graph ("CUDA Graphs"), results checked against numpy."""
import threading

import numpy as np
import pytest

import polyhal
from helpers import random_matrix, require, to_device

M, K, N = 24, 40, 16


def test_replay_recomputes_from_the_static_inputs(matmul, rng):
    # g = torch.cuda.CUDAGraph()
    # static_input = torch.randn(...)
    # with torch.cuda.graph(g):
    #     static_output = static_input @ weight
    # static_input.copy_(new_data); g.replay()
    a, b = random_matrix(rng, M, K), random_matrix(rng, K, N)
    static_a, static_b = to_device(a), to_device(b)
    static_out = polyhal.Buffer(M * N * 4)
    polyhal.synchronize()
    g = polyhal.Graph()
    with polyhal.graph(g) as captured:
        assert captured is g
        assert polyhal.capture_status() == "active"
        matmul(static_a, static_b, static_out, M, K, N)
    assert polyhal.capture_status(polyhal.default_stream()) == "none"
    for _ in range(3):
        a = random_matrix(rng, M, K)
        static_a.copy_from(a)
        g.replay()
        result = static_out.to_numpy(np.float32, (M, N))
        np.testing.assert_allclose(result, a @ b, rtol=1e-4, atol=1e-4)
    g.reset()


def test_host_functions_run_at_every_replay():
    require(polyhal.Capability.HOST_FUNCTIONS)
    calls = []
    done = threading.Event()
    g = polyhal.Graph()
    s = polyhal.Stream()
    with polyhal.graph(g, stream=s):
        s.launch_host_func(lambda: calls.append(1))
    assert calls == []
    for _ in range(5):
        g.replay(s)
    s.launch_host_func(done.set)
    assert done.wait(10)
    assert len(calls) == 5


def test_host_functions_on_a_forked_stream_run_at_every_replay():
    require(polyhal.Capability.HOST_FUNCTIONS)
    calls = []
    done = threading.Event()
    g = polyhal.Graph()
    s, forked = polyhal.Stream(), polyhal.Stream()
    with polyhal.graph(g, stream=s):
        forked.wait_stream(s)  # the fork: `forked` joins the capture
        assert polyhal.capture_status(forked) == "active"
        forked.launch_host_func(lambda: calls.append(1))
        s.wait_stream(forked)  # the join
    for _ in range(4):
        g.replay(s)
    s.launch_host_func(done.set)
    assert done.wait(10)
    assert len(calls) == 4
    g.reset()


def test_buffers_allocated_in_the_capture_belong_to_the_graph(rng):
    data = rng.integers(0, 255, 4096, dtype=np.uint8)
    source = to_device(data)
    out = polyhal.Buffer(4096)
    polyhal.synchronize()
    g = polyhal.Graph()
    s = polyhal.Stream()
    with polyhal.graph(g, stream=s):
        scratch = polyhal.Buffer(4096)  # graph-owned
        scratch.copy_from(source)
        out.copy_from(scratch)
        scratch.close()
    other = polyhal.Stream()
    g.replay(other)
    g.replay(s)
    np.testing.assert_array_equal(out.to_numpy(stream=s), data)


def test_synchronising_inside_the_capture_raises_and_invalidates():
    g = polyhal.Graph()
    s = polyhal.Stream()
    with pytest.raises(polyhal.StreamCaptureUnsupportedError):
        with polyhal.graph(g, stream=s):
            s.synchronize()
    assert polyhal.capture_status(s) == "none"
    with pytest.raises(RuntimeError):
        g.replay()


def test_a_fork_left_unjoined_is_refused():
    source, target = to_device(np.arange(64, dtype=np.uint8)), polyhal.Buffer(64)
    polyhal.synchronize()
    g = polyhal.Graph()
    s, side = polyhal.Stream(), polyhal.Stream()
    with pytest.raises(polyhal.StreamCaptureUnjoinedError):
        with polyhal.graph(g, stream=s):
            side.wait_stream(s)
            target.copy_from(source, stream=side)
    assert polyhal.capture_status(side) == "none"


def test_capture_arguments_are_checked():
    g = polyhal.Graph()
    with pytest.raises(TypeError):
        polyhal.graph(object())
    with pytest.raises(ValueError):
        g.capture_begin(polyhal.Stream(), capture_error_mode="sometimes")
    with pytest.raises(polyhal.StreamCaptureUnsupportedError):
        g.capture_begin(polyhal.default_stream())
    with pytest.raises(RuntimeError):
        g.capture_end()
    s = polyhal.Stream()
    g.capture_begin(s)
    with pytest.raises(RuntimeError):
        g.reset()
    g.capture_end()
    g.reset()


def test_a_buffer_allocated_in_the_capture_is_the_graphs_output(rng):
    # with torch.cuda.graph(g): static_output = f(static_input)   (allocated inside the capture)
    data = rng.integers(0, 255, 1024, dtype=np.uint8)
    source = to_device(data)
    polyhal.synchronize()
    g = polyhal.Graph()
    s = polyhal.Stream()
    with polyhal.graph(g, stream=s):
        static_output = polyhal.Buffer(1024)
        static_output.copy_from(source)
    g.replay(s)
    np.testing.assert_array_equal(static_output.to_numpy(stream=s), data)
    static_output.close()  # the graph keeps the memory until it is reset
    g.replay(s)
    s.synchronize()
    g.reset()


def test_a_graph_owned_buffer_outlives_the_graphs_reset(rng):
    # static_output stays usable after g.reset(), as a tensor of torch.cuda.graph's private pool
    data = rng.integers(0, 255, 1024, dtype=np.uint8)
    source = to_device(data)
    polyhal.synchronize()
    s = polyhal.Stream()
    g = polyhal.Graph()
    with polyhal.graph(g, stream=s):
        static_output = polyhal.Buffer(1024)
        static_output.copy_from(source)
    g.replay(s)
    s.synchronize()
    g.reset()
    del g
    # The pool may not hand the block to anyone else while the buffer is open.
    others = [polyhal.Buffer(1024, stream=s) for _ in range(8)]
    for other in others:
        assert other.ptr != static_output.ptr
        other.copy_from(to_device(np.zeros(1024, dtype=np.uint8)), stream=s)
    np.testing.assert_array_equal(static_output.to_numpy(stream=s), data)
    static_output.close()  # the last holder: the graph's memory goes back to the pool
    for other in others:
        other.close()
