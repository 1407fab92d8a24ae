"""The current stream: per thread and per device, as in PyTorch, MindSpore and PaddlePaddle.

A thread starts with the default stream of each device current. set_cur_stream() and StreamCtx
select a stream for the calling thread only; other threads keep their own.
"""
import threading

from ._device import device_index, get_device, on_device, set_device
from ._stream import Stream

_local = threading.local()
_defaults = {}  # device -> its default Stream, made once so that it is never destroyed
_defaults_lock = threading.Lock()


def _selected_streams():
    """The calling thread's {device: stream} selections."""
    try:
        return _local.streams
    except AttributeError:
        _local.streams = {}
        return _local.streams


def default_stream(device=None):
    """The default stream of `device` (default: the current device)."""
    device = get_device() if device is None else device_index(device)
    with _defaults_lock:
        stream = _defaults.get(device)
        if stream is None:
            with on_device(device):  # raises InvalidDeviceError for a device that does not exist
                stream = _defaults[device] = Stream._default(device)
    return stream


def current_stream(device=None):
    """The calling thread's current stream of `device` (default: the current device)."""
    device = get_device() if device is None else device_index(device)
    return _selected_streams().get(device) or default_stream(device)


def set_cur_stream(stream):
    """Makes `stream` the calling thread's current stream and its device the current device.
    Returns the stream that was current on that device before."""
    _require_stream(stream)
    previous = current_stream(stream.device)
    set_device(stream.device)
    _selected_streams()[stream.device] = stream
    return previous


def resolve(stream):
    """`stream`, or the calling thread's current stream when it is None; TypeError for anything
    that is not a Stream, ValueError for a closed one."""
    if stream is None:
        return current_stream()
    _require_stream(stream)
    return stream


def _require_stream(stream):
    if not isinstance(stream, Stream):
        raise TypeError(f"expected a polyhal.Stream, not {type(stream).__name__}")
    stream._require_open()


class StreamCtx:
    """``with StreamCtx(s):`` makes `s` (and its device) current for the calling thread inside
    the block, and restores the previous stream and device on exit. ``StreamCtx(None)`` changes
    nothing."""

    def __init__(self, stream):
        if stream is not None:
            _require_stream(stream)
        self._stream = stream
        self._restore = []  # (device, stream) per nesting level

    @property
    def stream(self):
        return self._stream

    def __enter__(self):
        if self._stream is not None:
            self._restore.append((get_device(), current_stream(self._stream.device)))
            set_cur_stream(self._stream)
        return self._stream

    def __exit__(self, *exc_info):
        if self._stream is not None:
            device, previous = self._restore.pop()
            _selected_streams()[self._stream.device] = previous
            set_device(device)
        return False


def stream(stream):
    """Alias of StreamCtx(stream), as torch.cuda.stream and paddle.device.stream_guard."""
    return StreamCtx(stream)
