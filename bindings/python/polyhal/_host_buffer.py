"""polyhal.HostBuffer: page-locked host memory (halMallocHost), the host end of asynchronous
copies, as torch's pin_memory() tensors and Paddle's pinned places are.

A copy between a Buffer and a HostBuffer with non_blocking=True is enqueued and the call returns
at once. The HostBuffer must then outlive the copy whatever the program does with its own
references: each such copy records an event after itself and keeps the HostBuffer in
`_in_flight` until that event has completed. The list is swept at every asynchronous copy, so
a HostBuffer whose copies are done is freed at the next one (or at close(), which waits for
them), as PyTorch's caching host allocator frees a pinned block once its events complete.
"""
import atexit
import ctypes
import threading

import numpy

from . import _dlpack
from ._capi import byte_count, hal
from ._device import get_device
from ._resource import Resource

_in_flight = []  # (event, HostBuffer) per asynchronous copy not yet seen complete
_in_flight_lock = threading.Lock()


class HostBuffer(_dlpack.InPlaceExport, Resource):
    """`nbytes` bytes of page-locked host memory for the current device's backend."""

    _kind = "host buffer"

    def __init__(self, nbytes):
        nbytes = byte_count(nbytes)
        ptr = ctypes.c_void_p()
        hal.halMallocHost(ctypes.byref(ptr), nbytes)
        self._ptr = ptr.value
        self._nbytes = nbytes
        self._device = get_device()
        self._closed = False

    @property
    def ptr(self):
        return self._ptr

    @property
    def nbytes(self):
        return self._nbytes

    @property
    def device(self):
        """The device whose backend page-locked the memory."""
        return self._device

    def numpy(self, dtype=numpy.uint8, shape=None):
        """A numpy array over the memory itself (no copy); it keeps the HostBuffer alive.
        Writing it while an asynchronous copy reads it, or reading it before a copy into it
        has completed, races with that copy."""
        self._require_open()
        dtype = numpy.dtype(dtype)
        memory = (ctypes.c_uint8 * self._nbytes).from_address(self._ptr)
        memory.host_buffer = self  # what the view's base chain leads back to (host_buffer_of)
        array = numpy.frombuffer(memory, dtype=dtype, count=self._nbytes // dtype.itemsize)
        return array if shape is None else array.reshape(shape)

    def __dlpack_device__(self):
        return (_dlpack.KDL_CPU_PINNED, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Exports the memory as a 1-D uint8 DLPack tensor on kDLCPUPinned, without copying;
        the export keeps the HostBuffer alive. Copies in flight are the caller's to wait for."""
        self._require_open()
        return self._export(self.__dlpack_device__(), max_version, dl_device, copy,
                            "numpy().copy()")

    def close(self):
        """Frees the memory once the asynchronous copies that use it have completed (waiting
        for them). Refused while a DLPack export is alive."""
        self._require_unexported()
        if not self._closed:
            for event in _events_using(self):
                event.synchronize()
        super().close()

    def _release(self):
        hal.halFreeHost(self._ptr)

    def __repr__(self):
        state = "closed" if self._closed else f"0x{self._ptr:x}"
        return f"<polyhal.HostBuffer {state} nbytes={self._nbytes} device={self._device}>"


def host_buffer_of(array):
    """The HostBuffer whose memory the numpy array `array` views (numpy() and views of it),
    or None."""
    base = array
    while isinstance(base, numpy.ndarray):
        base = base.base
    owner = getattr(base, "host_buffer", None)
    return owner if isinstance(owner, HostBuffer) else None


def keep_until_done(host, stream):
    """Keeps `host` alive until the work enqueued on `stream` so far has completed, and lets go
    of HostBuffers whose copies have."""
    event = stream.record_event()
    with _in_flight_lock:
        finished = [entry for entry in _in_flight if _finished(entry[0])]
        _in_flight[:] = [entry for entry in _in_flight if not entry[0].closed]
        _in_flight.append((event, host))
    # Dropped here, outside the lock: a HostBuffer whose last reference this was closes itself.
    del finished


def _finished(event):
    if not event.query():
        return False
    event.close()
    return True


@atexit.register
def _finish_in_flight():
    """At exit, before the interpreter shuts down: the copies still in flight complete, then
    their HostBuffers are freed (not left to the process, which a leak check would report)."""
    with _in_flight_lock:
        pending = _in_flight[:]
        del _in_flight[:]
    for event, _host in pending:
        try:
            event.synchronize()
            event.close()
        except Exception:
            pass  # a failed copy was the program's to see; nothing is left to tell


def _events_using(host):
    with _in_flight_lock:
        return [event for event, kept in _in_flight if kept is host and not event.closed]
