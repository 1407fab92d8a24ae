"""polyhal.Graph and polyhal.graph: work captured from a stream once and replayed, as
torch.cuda.CUDAGraph and torch.cuda.graph.

Inside ``with polyhal.graph(g, stream=s):`` the stream `s` (default: a new stream) is the
current stream and is being captured: work submitted to it is recorded, not run, and g.replay()
runs all of it again, on any stream of the device. Calls that would wait for the device
(Stream.synchronize, Buffer.to_numpy, synchronize()) raise StreamCaptureUnsupportedError and
invalidate the capture. Buffers allocated inside the capture are graph-owned memory (hal.h):
their address is fixed for every replay, and the memory is released once the graph was reset or
collected and every such buffer was closed or collected (as torch.cuda.graph's private pool). Host functions
launched inside the capture run at every replay; their callables are kept until the process
exits, since a replay may still be pending when the graph goes.
"""
import ctypes

from ._capi import (HAL_CAPTURE_MODE_GLOBAL, HAL_CAPTURE_MODE_RELAXED,
                    HAL_CAPTURE_MODE_THREAD_LOCAL, HAL_CAPTURE_STATUS_ACTIVE,
                    HAL_CAPTURE_STATUS_INVALIDATED, Handle, hal)
from ._current import StreamCtx, resolve
from ._graph_owner import GraphOwner
from ._resource import Resource
from ._stream import Stream
from . import _graph_owner, _host_func

_MODES = {
    "global": HAL_CAPTURE_MODE_GLOBAL,
    "thread_local": HAL_CAPTURE_MODE_THREAD_LOCAL,
    "relaxed": HAL_CAPTURE_MODE_RELAXED,
}


def capture_status(stream=None):
    """"none", "active" or "invalidated": whether `stream` (default: the current stream) is
    being captured."""
    stream = resolve(stream)
    status = ctypes.c_int()
    with stream._selected():
        hal.halStreamGetCaptureInfo(stream._handle, ctypes.byref(status))
    return {HAL_CAPTURE_STATUS_ACTIVE: "active",
            HAL_CAPTURE_STATUS_INVALIDATED: "invalidated"}.get(status.value, "none")


class Graph(Resource):
    """A graph, empty until a capture fills it (torch.cuda.CUDAGraph)."""

    _kind = "graph"

    def __init__(self):
        self._handle = None
        self._owner = None  # the native graph, shared with the buffers allocated in the capture
        self._capturing = None  # the stream being captured
        self._host_tokens = []  # host functions the graph replays (kept until exit)
        self._closed = False

    def capture_begin(self, stream=None, capture_error_mode="global"):
        """Starts capturing `stream` (default: the current stream; never the default stream).
        `capture_error_mode` is "global", "thread_local" or "relaxed" (hal.h, halCaptureMode)."""
        self._require_open()
        if capture_error_mode not in _MODES:
            raise ValueError(f"capture_error_mode must be one of {sorted(_MODES)}, not "
                             f"{capture_error_mode!r}")
        if self._handle is not None or self._capturing is not None:
            raise RuntimeError("the graph was captured already; reset() it first")
        stream = resolve(stream)
        with stream._selected():
            hal.halStreamBeginCapture(stream._handle, _MODES[capture_error_mode])
        self._capturing = stream
        self._owner = GraphOwner()
        _graph_owner.begin_capture(stream._handle, self._owner)
        _host_func.begin_capture(stream._handle, self._host_tokens)

    def capture_end(self):
        """Ends the capture; the graph holds its work."""
        if self._capturing is None:
            raise RuntimeError("capture_end() without capture_begin()")
        stream, self._capturing = self._capturing, None
        handle = Handle()
        try:
            with stream._selected():
                hal.halStreamEndCapture(stream._handle, ctypes.byref(handle))
        except BaseException:
            self._end_capture(stream)
            raise
        self._end_capture(stream)
        self._handle = handle.value
        self._owner.captured(handle.value, stream.device)

    def _end_capture(self, stream):
        _host_func.end_capture(stream._handle)
        _graph_owner.end_capture(stream._handle)

    def replay(self, stream=None):
        """Runs the captured work on `stream` (default: the current stream), after the stream's
        earlier work and after the graph's previous replay."""
        self._require_open()
        if self._handle is None:
            raise RuntimeError("the graph has not been captured")
        stream = resolve(stream)
        with stream._selected():
            hal.halGraphLaunch(self._handle, stream._handle)

    def reset(self):
        """Releases the captured work (replays already enqueued complete); the graph may be
        captured again. Buffers allocated in the capture stay valid until they are closed."""
        self._require_open()
        if self._capturing is not None:
            raise RuntimeError("the graph is being captured; end the capture before reset()")
        self._destroy()

    def _destroy(self):
        self._handle = None
        owner, self._owner = self._owner, None
        if owner is not None:
            owner.release()

    def _release(self):
        self._destroy()

    def __repr__(self):
        state = ("closed" if self._closed else "capturing" if self._capturing is not None
                 else "empty" if self._handle is None else "captured")
        return f"<polyhal.Graph {state}>"


class graph:
    """``with polyhal.graph(g, stream=None, capture_error_mode="global"):`` captures the work
    submitted in the block into `g` (torch.cuda.graph). `stream` defaults to a new stream; it is
    the current stream inside the block."""

    def __init__(self, cuda_graph, stream=None, capture_error_mode="global"):
        if not isinstance(cuda_graph, Graph):
            raise TypeError(f"expected a polyhal.Graph, not {type(cuda_graph).__name__}")
        self._graph = cuda_graph
        self._stream = Stream() if stream is None else resolve(stream)
        self._mode = capture_error_mode
        self._context = StreamCtx(self._stream)

    @property
    def stream(self):
        return self._stream

    def __enter__(self):
        self._context.__enter__()
        try:
            self._graph.capture_begin(self._stream, self._mode)
        except BaseException:
            self._context.__exit__(None, None, None)
            raise
        return self._graph

    def __exit__(self, exc_type, exc, traceback):
        try:
            self._graph.capture_end()
        except Exception:
            if exc_type is None:
                raise  # an error in the block is the one to report
        finally:
            self._context.__exit__(exc_type, exc, traceback)
        return False
