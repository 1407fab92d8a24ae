"""Who keeps a native graph alive: the Graph and every Buffer allocated in its capture.

A Buffer allocated inside a capture is graph-owned memory (hal.h): halGraphDestroy returns it to
the pool. As with torch.cuda.graph's private memory pool, the memory stays valid while a Buffer
of it is open, so the native graph is destroyed only once the Graph was reset (or collected) and
every such Buffer was closed (or collected).
"""
import threading

from ._capi import hal
from ._device import on_device

_lock = threading.Lock()
_capturing = {}  # stream handle -> the _GraphOwner of the capture that stream began


class GraphOwner:
    """The native graph of one capture, with a count of its holders."""

    def __init__(self):
        self._handle = None  # set when the capture made a graph
        self._device = None
        self._holders = 1  # the Graph

    def captured(self, handle, device):
        with _lock:
            self._handle, self._device = handle, device

    def hold(self):
        with _lock:
            self._holders += 1

    def release(self):
        """One holder lets go; the last destroys the native graph."""
        with _lock:
            self._holders -= 1
            if self._holders > 0 or self._handle is None:
                return
            handle, self._handle = self._handle, None
        with on_device(self._device):
            hal.halGraphDestroy(handle)


def begin_capture(stream_handle, owner):
    with _lock:
        _capturing[stream_handle] = owner


def end_capture(stream_handle):
    with _lock:
        _capturing.pop(stream_handle, None)


def owner_for(stream_handle):
    """The owner of the capture `stream_handle` takes part in: the stream that began it, or, for
    a stream forked into a capture, the only capture under way. None where that is ambiguous."""
    with _lock:
        owner = _capturing.get(stream_handle)
        if owner is None and len(_capturing) == 1:
            owner = next(iter(_capturing.values()))
        if owner is not None:
            owner._holders += 1
        return owner
