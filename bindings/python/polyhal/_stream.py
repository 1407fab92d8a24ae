"""polyhal.Stream: an in-order queue of work on one device."""
import contextlib
import ctypes

from . import _host_func
from ._capi import HAL_CAPTURE_STATUS_NONE, Handle, hal
from ._device import get_device, get_device_properties, on_device, priority_range
from ._resource import Resource


_STREAM_NON_BLOCKING = 1  # HAL_STREAM_NON_BLOCKING
_ALREADY_SELECTED = contextlib.nullcontext()  # what a created stream's _selected() enters
Event = None  # polyhal.Event: set by _event, which imports this module, when it is imported
_DEFAULT_STREAM_MODES = {"ordinary": 0, "legacy": 1}  # halDefaultStreamMode


def set_default_stream_mode(mode):
    """Chooses what the default stream is for the whole process (halSetDefaultStreamMode):
    "ordinary" (the default) or "legacy", CUDA's legacy default stream, whose work waits for
    the device's blocking streams and they for it (POLYHAL_DEFAULT_STREAM does the same from the
    environment)."""
    if mode not in _DEFAULT_STREAM_MODES:
        raise ValueError(f"mode must be 'ordinary' or 'legacy', not {mode!r}")
    hal.halSetDefaultStreamMode(_DEFAULT_STREAM_MODES[mode])


def default_stream_mode():
    """The process's default stream mode: "ordinary" or "legacy"."""
    mode = ctypes.c_int()
    hal.halGetDefaultStreamMode(ctypes.byref(mode))
    return next(name for name, value in _DEFAULT_STREAM_MODES.items() if value == mode.value)


class Stream(Resource):
    """A stream (torch.Stream, mindspore.hal.Stream, paddle.device.Stream).

    ``Stream(*, device=None, priority=0, non_blocking=False)`` creates a stream on `device`
    (default: the current device; anything polyhal.device takes). The arguments are keywords
    only: ``torch.Stream(1)`` and ``paddle.device.Stream(1)`` name a device where
    ``mindspore.hal.Stream(1)`` names a priority, so a positional one is refused rather than
    guessed (polyhal.compat keeps each framework's order). Lower priority numbers are higher
    priorities (priority_range()); a priority outside the device's range is clamped to it, and
    ``priority`` reports the clamped value. ``non_blocking=True`` (HAL_STREAM_NON_BLOCKING,
    cudaStreamNonBlocking) keeps the stream out of the implicit waits of a legacy default stream
    (``set_default_stream_mode("legacy")``). ``with stream:`` makes it the current stream inside
    the block, as ``with polyhal.stream(stream):`` does.
    """

    _kind = "stream"

    def __init__(self, *args, device=None, priority=0, non_blocking=False):
        if args:
            raise TypeError(
                "Stream() takes keyword arguments only (Stream(device=..., priority=...)): "
                "torch.Stream(1) and paddle's Stream(1) name a device, mindspore's Stream(1) a "
                "priority; polyhal.compat has each framework's order")
        if not isinstance(priority, int) or isinstance(priority, bool):
            raise TypeError(f"priority must be an int, not {type(priority).__name__}")
        handle = Handle()
        with on_device(device):
            self._device = get_device()
            least, greatest = priority_range(self._device)
            priority = min(max(priority, greatest), least)  # as polyhal clamps it
            flags = _STREAM_NON_BLOCKING if non_blocking else 0
            hal.halCreateStreamWithConfig(ctypes.byref(handle), priority, flags)
        self._handle = handle.value
        self._priority = priority
        self._non_blocking = bool(non_blocking)
        self._closed = False

    @classmethod
    def _default(cls, device):
        """The default stream of `device`: the NULL handle."""
        stream = cls.__new__(cls)
        stream._device = device
        stream._handle = None
        stream._priority = 0
        stream._non_blocking = False
        stream._closed = False
        return stream

    @property
    def device(self):
        return self._device

    @property
    def device_index(self):
        """The device's ordinal (torch.Stream.device_index): the same int as `device`."""
        return self._device

    @property
    def device_type(self):
        """The backend's name ("cpu", "cuda", ...), as torch.Stream.device_type names the
        device type."""
        return get_device_properties(self._device).backend

    @property
    def stream_id(self):
        """An int naming the stream among the device's streams (torch.Stream.stream_id): 0 for
        the default stream."""
        return self._handle or 0

    def is_capturing(self):
        """True while the stream is being captured into a graph (torch.Stream.is_capturing)."""
        with self._selected():
            return self._is_capturing_selected()

    def _is_capturing_selected(self):
        """is_capturing(), for a caller that has selected the stream already."""
        status = ctypes.c_int()
        hal.halStreamGetCaptureInfo(self._handle, ctypes.byref(status))
        return status.value != HAL_CAPTURE_STATUS_NONE

    @property
    def priority(self):
        return self._priority

    @property
    def non_blocking(self):
        """True for a stream created with non_blocking=True."""
        return self._non_blocking

    @property
    def is_default(self):
        return self._handle is None

    @property
    def native_handle(self):
        """The vendor's queue behind the stream, as an int (NotSupportedError if the backend
        does not expose it)."""
        native = ctypes.c_void_p()
        with self._selected():
            hal.halStreamGetNativeHandle(self._handle, ctypes.byref(native))
        return native.value or 0

    def query(self):
        """True when all work submitted to the stream has finished."""
        with self._selected():
            return hal.halQueryStream(self._handle)

    def synchronize(self):
        """Blocks until all work submitted to the stream has finished."""
        with self._selected():
            hal.halSynchronizeStream(self._handle)

    def record_event(self, event=None):
        """Records `event` (default: a new Event) on the stream and returns it."""
        if event is None:
            with on_device(self._device):
                event = Event()
        elif not isinstance(event, Event):
            raise TypeError(f"record_event() needs a polyhal.Event or None, not "
                            f"{type(event).__name__}")
        event.record(self)
        return event

    def wait_event(self, event):
        """Makes the stream's later work wait for the work `event` captured; the host does not
        wait."""
        if not isinstance(event, Event):
            raise TypeError(f"wait_event() needs a polyhal.Event, not {type(event).__name__}")
        event._require_open()
        with self._selected():
            hal.halStreamWaitEvent(self._handle, event._handle)

    def wait_stream(self, stream):
        """Makes the stream's later work wait for all work submitted to `stream` so far."""
        if not isinstance(stream, Stream):
            raise TypeError(f"wait_stream() needs a polyhal.Stream, not {type(stream).__name__}")
        event = stream.record_event()
        try:
            self.wait_event(event)
        finally:
            event.close()  # the enqueued wait keeps the point it saw

    def launch_host_func(self, function):
        """Runs function() on a host thread after the stream's earlier work; the stream's later
        work starts once it returns. It must not wait for this same stream, nor, on a device
        without Capability.CONCURRENT_HOST_FUNCTIONS, for another stream's host function. Inside
        it, polyhal calls that reach the device raise NotPermittedError (only device queries,
        get_device/set_device and memory statistics are allowed)."""
        if not callable(function):
            raise TypeError(f"launch_host_func() needs a callable, not {type(function).__name__}")
        with self._selected():
            _host_func.launch(self._handle, self._device, function)

    def __enter__(self):
        from ._current import StreamCtx  # here, not at the top: _current imports this module

        if not hasattr(self, "_entered"):
            self._entered = []
        context = StreamCtx(self)
        self._entered.append(context)
        return context.__enter__()

    def __exit__(self, *exc_info):
        return self._entered.pop().__exit__(*exc_info)

    def _selected(self):
        """Context in which the stream's handle means this stream: the NULL handle names the
        default stream of the calling thread's current device, so that device is made current.
        Raises ValueError if the stream is closed."""
        self._require_open()
        return on_device(self._device) if self._handle is None else _ALREADY_SELECTED

    def close(self):
        """Destroys the stream; work already submitted still runs."""
        if self._handle is None:
            raise ValueError("the default stream cannot be closed")
        super().close()

    def _release(self):
        hal.halDestroyStream(self._handle)

    def __eq__(self, other):
        if not isinstance(other, Stream):
            return NotImplemented
        return (self._device, self._handle) == (other._device, other._handle)

    def __hash__(self):
        return hash((self._device, self._handle))

    def __repr__(self):
        what = "default" if self._handle is None else f"0x{self._handle:x}"
        state = ", closed" if self._closed else ""
        return f"<polyhal.Stream {what} device={self._device} priority={self._priority}{state}>"
