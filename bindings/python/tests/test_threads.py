"""The current stream is per thread: each thread selects and uses its own."""
import threading

import numpy as np

import polyhal
from helpers import random_matrix, to_device

THREADS = 4
M, K, N = 24, 16, 32


def run_in_threads(work):
    """Runs work(index) in THREADS threads; re-raises the first failure."""
    failures = []

    def guarded(index):
        try:
            work(index)
        except BaseException as failure:
            failures.append(failure)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


def test_threads_each_compute_on_their_own_current_stream(matmul, rng):
    inputs = [(random_matrix(rng, M, K), random_matrix(rng, K, N)) for _ in range(THREADS)]
    inside = threading.Barrier(THREADS, timeout=60)
    streams, results = [None] * THREADS, [None] * THREADS

    def work(index):
        assert polyhal.current_stream() == polyhal.default_stream()
        streams[index] = polyhal.Stream()
        with polyhal.stream(streams[index]):
            inside.wait()  # every thread has its own stream selected at the same time
            assert polyhal.current_stream() == streams[index]
            a, b = inputs[index]
            c = polyhal.Buffer(M * N * 4)
            assert c.stream == streams[index]
            matmul(to_device(a), to_device(b), c, M, K, N)
            inside.wait()
            assert polyhal.current_stream() == streams[index]
            results[index] = c.to_numpy(np.float32, (M, N))
        assert polyhal.current_stream() == polyhal.default_stream()

    run_in_threads(work)
    assert len(set(streams)) == THREADS
    assert polyhal.current_stream() == polyhal.default_stream()
    for (a, b), result in zip(inputs, results):
        np.testing.assert_allclose(result, a @ b, rtol=1e-4, atol=1e-4)


def test_set_cur_stream_in_one_thread_leaves_others_alone():
    selected = threading.Event()
    checked = threading.Event()
    mine = polyhal.Stream()

    def selects():
        polyhal.set_cur_stream(polyhal.Stream())
        selected.set()
        checked.wait(60)

    other = threading.Thread(target=selects)
    with polyhal.stream(mine):
        other.start()
        selected.wait(60)
        assert polyhal.current_stream() == mine
        checked.set()
    other.join()
    assert polyhal.current_stream() == polyhal.default_stream()


def test_events_and_buffers_shared_between_threads():
    # A producer thread writes and records; a consumer thread waits on the event and reads.
    payload = np.arange(4096, dtype=np.uint32)
    shared = polyhal.Buffer(payload.nbytes)
    recorded = threading.Event()
    box = {}

    def producer():
        s = polyhal.Stream()
        with polyhal.stream(s):
            scratch = to_device(payload)
            shared.copy_from(scratch)
            box["event"] = s.record_event()
        recorded.set()

    def consumer():
        recorded.wait(60)
        s = polyhal.Stream()
        box["event"].wait(s)
        box["result"] = shared.to_numpy(np.uint32, stream=s)

    threads = [threading.Thread(target=producer), threading.Thread(target=consumer)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    np.testing.assert_array_equal(box["result"], payload)
