"""polyhal.Event: a point in a stream."""
import ctypes

from . import _ipc, _stream
from ._capi import (HAL_EVENT_BLOCKING_SYNC, HAL_EVENT_DISABLE_TIMING, HAL_EVENT_INTERPROCESS,
                    Handle, IpcHandle, hal)
from ._current import resolve
from ._device import get_device, on_device
from ._resource import Resource


class Event(Resource):
    """An event (torch.Event, mindspore.hal.Event, paddle.device.Event).

    ``Event(*, device=None, enable_timing=False, blocking=False, interprocess=False)``; the
    arguments are keywords only: ``torch.Event(1)`` names a device where
    ``mindspore.hal.Event(True)`` enables timing (polyhal.compat keeps each framework's order).
    ``device``: the event's device. Without it, as with torch.Event, the event takes the device
    of the stream it is first recorded on (until then it is the current device's).
    ``enable_timing``: elapsed_time() works (costs a timestamp per record).
    ``blocking``: synchronize() sleeps instead of spinning.
    ``interprocess``: the event may be shared with other processes (ipc_handle(), or pickling
    it, e.g. through a multiprocessing queue); it cannot have timing, and stays on the device it
    was made on.
    Querying or waiting on an event that was never recorded succeeds at once.
    """

    _kind = "event"

    def __init__(self, *args, device=None, enable_timing=False, blocking=False,
                 interprocess=False):
        if args:
            raise TypeError(
                "Event() takes keyword arguments only (Event(enable_timing=...)): torch.Event(1) "
                "and paddle's Event(1) name a device, mindspore's Event(True) enables timing; "
                "polyhal.compat has each framework's order")
        if interprocess and enable_timing:
            raise ValueError("an interprocess event cannot have timing (enable_timing=False)")
        self._flags = (0 if enable_timing else HAL_EVENT_DISABLE_TIMING) | (
            HAL_EVENT_BLOCKING_SYNC if blocking else 0) | (
            HAL_EVENT_INTERPROCESS if interprocess else 0)
        with on_device(device):
            self._handle = self._create()
            self._device = get_device()
        # torch.Event's rule: an event made without a device goes where it is first recorded.
        self._movable = device is None and not interprocess
        self._enable_timing = bool(enable_timing)
        self._blocking = bool(blocking)
        self._interprocess = bool(interprocess)
        self._closed = False

    @classmethod
    def from_ipc_handle(cls, handle):
        """Opens an interprocess event another process exported (ipc_handle()), on the current
        device. Recording it here is seen there too, and the other way round."""
        opened = Handle()
        hal.halIpcOpenEventHandle(ctypes.byref(opened), IpcHandle.from_bytes(handle))
        event = cls.__new__(cls)
        event._handle = opened.value
        event._device = get_device()
        event._movable = False
        event._enable_timing = False
        event._blocking = False
        event._interprocess = True
        event._closed = False
        return event

    def ipc_handle(self):
        """The bytes another process passes to Event.from_ipc_handle()."""
        self._require_open()
        handle = IpcHandle()
        hal.halIpcGetEventHandle(ctypes.byref(handle), self._handle)
        data = bytes(handle.reserved)
        _ipc.remember(data, self)
        return data

    def __reduce__(self):
        if not self._interprocess:
            raise TypeError("only an Event(interprocess=True) can be pickled")
        return _ipc.reduce_shared(_rebuild_event, self.ipc_handle())

    @property
    def interprocess(self):
        return self._interprocess

    @property
    def device(self):
        return self._device

    @property
    def event_id(self):
        """An int naming the event (torch.Event.event_id)."""
        self._require_open()
        return self._handle

    @property
    def enable_timing(self):
        return self._enable_timing

    @property
    def blocking(self):
        return self._blocking

    def record(self, stream=None):
        """Captures the work submitted to `stream` (default: the current stream) so far;
        recording again moves the event. An event made without a device takes the stream's
        device at its first record; otherwise a stream of another device is an
        InvalidValueError."""
        stream = resolve(stream)
        self._require_open()
        if self._movable and stream.device != self._device:
            with on_device(stream.device):
                handle = self._create()
            hal.halDestroyEvent(self._handle)  # never recorded: nothing waits on it
            self._handle, self._device = handle, stream.device
        with stream._selected():
            hal.halRecordEvent(self._handle, stream._handle)
        self._movable = False

    def _create(self):
        """A new event of the current device with the event's flags."""
        handle = Handle()
        hal.halCreateEventWithFlag(ctypes.byref(handle), self._flags)
        return handle.value

    def wait(self, stream=None):
        """Makes `stream`'s (default: the current stream's) later work wait for this event."""
        resolve(stream).wait_event(self)

    def query(self):
        """True when the captured work has finished (or the event was never recorded)."""
        self._require_open()
        return hal.halQueryEvent(self._handle)

    def synchronize(self):
        """Blocks until the captured work has finished."""
        self._require_open()
        hal.halSynchronizeEvent(self._handle)

    def elapsed_time(self, end_event):
        """Milliseconds from this event to `end_event`; both recorded, completed and created
        with enable_timing=True."""
        if not isinstance(end_event, Event):
            raise TypeError(f"elapsed_time() needs a polyhal.Event, not "
                            f"{type(end_event).__name__}")
        self._require_open()
        end_event._require_open()
        ms = ctypes.c_float()
        hal.halEventElapsedTime(ctypes.byref(ms), self._handle, end_event._handle)
        return ms.value

    def _release(self):
        hal.halDestroyEvent(self._handle)

    def __repr__(self):
        state = ", closed" if self._closed else ""
        return f"<polyhal.Event 0x{self._handle:x} device={self._device}{state}>"


_stream.Event = Event  # Stream.record_event and wait_event take it


def _rebuild_event(handle, pid):
    """Unpickles an interprocess event: the original in its own process, else opened."""
    return _ipc.local_original(handle, pid, "event") or Event.from_ipc_handle(handle)
