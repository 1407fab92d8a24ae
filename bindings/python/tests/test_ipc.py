"""Buffers and events shared between processes: pickling a Buffer through multiprocessing sends
its IPC handle, as torch.multiprocessing does for CUDA tensors."""
import multiprocessing
import pickle
import time

import numpy as np
import pytest

import polyhal
from helpers import require

N = 1 << 18  # uint32 elements: 1 MiB


def _child(inbox, outbox):
    """The other process: reads the buffer it was sent, writes it doubled after a delay in
    stream order, and sends back an interprocess event recorded after the write (or, on a device
    without IPC events, answers once the write is done)."""
    try:
        shared = inbox.get(timeout=60)
        seen = shared.to_numpy(dtype=np.uint32)
        if not np.array_equal(seen, np.arange(N, dtype=np.uint32)):
            raise AssertionError("the child read other bytes than the parent wrote")
        doubled = polyhal.Buffer(shared.nbytes)
        doubled.copy_from(seen * 2)
        stream = polyhal.current_stream()
        if polyhal.Capability.HOST_FUNCTIONS in polyhal.get_device_properties().capabilities:
            stream.launch_host_func(lambda: time.sleep(0.2))  # a wait that fails reads early
        shared.copy_from(doubled)
        written = None
        if polyhal.Capability.IPC_EVENTS in polyhal.get_device_properties().capabilities:
            written = polyhal.Event(interprocess=True)
            written.record()
        else:
            stream.synchronize()
        outbox.put(("written", written))
        if inbox.get(timeout=60) != "done":
            raise AssertionError("expected 'done'")
        assert shared.imported
        shared.close()
        outbox.put(("closed", None))
    except BaseException as error:  # everything goes to the parent, which reports it
        outbox.put(("failed", repr(error)))


def test_a_buffer_and_an_event_travel_through_multiprocessing():
    require(polyhal.Capability.IPC_MEMORY)
    context = multiprocessing.get_context("spawn")  # polyhal's threads do not survive fork
    inbox, outbox = context.Queue(), context.Queue()
    child = context.Process(target=_child, args=(inbox, outbox))
    child.start()
    try:
        shared = polyhal.Buffer(N * 4)
        shared.copy_from(np.arange(N, dtype=np.uint32))
        inbox.put(shared)
        what, written = outbox.get(timeout=120)
        assert what == "written", written
        if written is not None:
            polyhal.current_stream().wait_event(written)
        assert np.array_equal(shared.to_numpy(dtype=np.uint32),
                              np.arange(N, dtype=np.uint32) * 2)
        inbox.put("done")
        what, detail = outbox.get(timeout=60)
        assert what == "closed", detail
        child.join(60)
        assert child.exitcode == 0
        if written is not None:
            written.close()
        shared.close()
    finally:
        if child.is_alive():
            child.kill()


def test_unpickled_in_its_own_process_the_original_comes_back():
    require(polyhal.Capability.IPC_MEMORY)
    shared = polyhal.Buffer(4096)
    assert pickle.loads(pickle.dumps(shared)) is shared
    handle = shared.ipc_handle()
    assert isinstance(handle, bytes) and len(handle) == 128
    with pytest.raises(polyhal.InvalidValueError, match="this process"):
        polyhal.Buffer.from_ipc_handle(handle, 4096)
    shared.close()
    with pytest.raises(ValueError, match="closed"):
        pickle.loads(pickle.dumps(polyhal.Buffer(16)))  # the temporary is gone by then


def test_interprocess_events_pickle_and_others_do_not():
    require(polyhal.Capability.IPC_EVENTS)
    event = polyhal.Event(interprocess=True)
    assert event.interprocess
    event.record()
    assert pickle.loads(pickle.dumps(event)) is event
    with pytest.raises(TypeError, match="interprocess"):
        pickle.dumps(polyhal.Event())
    with pytest.raises(ValueError, match="timing"):
        polyhal.Event(interprocess=True, enable_timing=True)
    with pytest.raises(ValueError, match="128 bytes"):
        polyhal.Event.from_ipc_handle(b"short")
    with pytest.raises(polyhal.InvalidValueError):
        polyhal.Event.from_ipc_handle(bytes(128))


def test_a_backend_without_ipc_refuses_to_share():
    caps = polyhal.get_device_properties().capabilities
    if polyhal.Capability.IPC_MEMORY in caps:
        pytest.skip("the backend shares memory between processes")
    with pytest.raises(polyhal.NotSupportedError, match="cannot share memory"):
        pickle.dumps(polyhal.Buffer(4096))
    if polyhal.Capability.IPC_EVENTS not in caps:
        with pytest.raises(polyhal.NotSupportedError, match="INTERPROCESS"):
            polyhal.Event(interprocess=True)
