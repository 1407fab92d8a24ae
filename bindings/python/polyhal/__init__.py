"""polyhal from Python: the C ABI of libpolyhal through ctypes, with the stream API of
mindspore.hal, paddle.device and torch.Stream/torch.Event.

The library is found through POLYHAL_LIBRARY (a path), else in lib/ inside this package, else by
the system loader. The backend is chosen by POLYHAL_BACKEND when the first call initialises
polyhal; importing this package does not initialise it.
"""
from ._check import check_enabled, check_findings
from ._current import StreamCtx, current_stream, default_stream, set_cur_stream, stream
from ._device import (Capability, DeviceProperties, backend, can_device_access_peer, device,
                      device_count, disable_peer_access, enable_peer_access, get_device,
                      get_device_properties, mem_get_info, priority_range, set_device,
                      synchronize)
from ._event import Event
from ._graph import Graph, capture_status, graph
from ._host_buffer import HostBuffer
from ._memory import Buffer, empty_cache, from_dlpack, memory_stats
from ._module import Function, Module
from ._stream import Stream, default_stream_mode, set_default_stream_mode
from ._trace import trace, trace_range, trace_start, trace_stop
from . import compat
from .errors import (BackendError, BackendIncompatibleError, BackendNotFoundError, HalError,
                     InvalidDeviceError, InvalidHandleError, InvalidImageError, InvalidValueError,
                     LaunchFailedError, NoDeviceError, NotFoundError, NotPermittedError,
                     NotReadyError, NotSupportedError, OutOfMemoryError,
                     StreamCaptureInvalidatedError, StreamCaptureIsolationError,
                     StreamCaptureUnjoinedError, StreamCaptureUnmatchedError,
                     StreamCaptureUnsupportedError, StreamCaptureWrongThreadError, UnknownError)

__version__ = "0.1.0"

__all__ = [
    "BackendError", "BackendIncompatibleError", "BackendNotFoundError", "Buffer", "Capability",
    "DeviceProperties", "Event", "Function", "Graph", "HalError", "HostBuffer", "InvalidDeviceError",
    "InvalidHandleError", "InvalidImageError", "InvalidValueError", "LaunchFailedError",
    "Module", "NoDeviceError", "NotFoundError", "NotPermittedError", "NotReadyError",
    "NotSupportedError", "OutOfMemoryError", "Stream", "StreamCaptureInvalidatedError",
    "StreamCaptureIsolationError", "StreamCaptureUnjoinedError", "StreamCaptureUnmatchedError",
    "StreamCaptureUnsupportedError", "StreamCaptureWrongThreadError", "StreamCtx", "UnknownError",
    "backend", "can_device_access_peer", "capture_status", "check_enabled", "check_findings",
    "compat", "current_stream", "default_stream", "default_stream_mode", "device", "device_count",
    "disable_peer_access", "empty_cache", "enable_peer_access", "from_dlpack", "get_device",
    "get_device_properties", "graph", "mem_get_info", "memory_stats", "priority_range",
    "set_cur_stream", "set_default_stream_mode", "set_device", "stream", "synchronize", "trace",
    "trace_range", "trace_start", "trace_stop",
]
