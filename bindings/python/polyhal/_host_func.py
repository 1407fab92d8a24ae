"""Python callables run in stream order through halLaunchHostFunc.

One C trampoline serves every call: the user data is a token naming the pending callable, so no
per-call ctypes callback object has to be kept alive. An exception raised by the callable cannot
reach the stream; ctypes reports it through sys.unraisablehook ("Exception ignored on calling
ctypes callback function").

At exit, devices with callables still pending or running are synchronised, so that no backend
thread calls into an interpreter that is shutting down.

Inside a callable polyhal refuses every call that reaches the device (NotPermittedError); objects
released there are released later instead (see _resource).
"""
import atexit
import ctypes
import itertools
import threading

from ._capi import HAL_CAPTURE_STATUS_NONE, HostFn, hal
from ._device import synchronize
from ._resource import release_deferred, running_host_function
from .errors import HalError

_pending = {}  # token -> (callable, device)
_pending_lock = threading.Lock()
_tokens = itertools.count(1)  # 0 would arrive as None
# Host functions launched on a capturing stream run at every replay of the graph, and a replay
# may still be pending when the graph is released, so their callables are kept until exit:
# stream handle -> the capturing graph's list of tokens. A stream forked into a capture (it waited
# on an event recorded in it) is not in this map; halStreamGetCaptureInfo tells.
_capturing = {}
_kept = set()


@HostFn
def _trampoline(token):
    running_host_function(True)
    try:
        with _pending_lock:
            function, _device = _pending[token]
        try:
            function()
        finally:
            with _pending_lock:
                if token not in _kept:
                    del _pending[token]  # only now: the exit drain must also wait for running ones
            # Objects the callable was the last to hold go to release_deferred(), not to
            # halFree, which is not permitted here.
            del function
    finally:
        running_host_function(False)


def launch(stream_handle, device, function):
    """Enqueues function() on the stream; the stream's later work waits until it returns."""
    release_deferred()
    token = next(_tokens)
    captured = _in_capture(stream_handle)
    with _pending_lock:
        _pending[token] = (function, device)
        if captured:
            _kept.add(token)
            graph_tokens = _capturing.get(stream_handle)
            if graph_tokens is not None:
                graph_tokens.append(token)
    try:
        hal.halLaunchHostFunc(stream_handle, _trampoline, token)
    except BaseException:
        with _pending_lock:
            _pending.pop(token, None)
            _kept.discard(token)
        raise


def _in_capture(stream_handle):
    status = ctypes.c_int()
    hal.halStreamGetCaptureInfo(stream_handle, ctypes.byref(status))
    return status.value != HAL_CAPTURE_STATUS_NONE


def begin_capture(stream_handle, graph_tokens):
    """Host functions launched on the stream from now on are kept in `graph_tokens`."""
    with _pending_lock:
        _capturing[stream_handle] = graph_tokens


def end_capture(stream_handle):
    with _pending_lock:
        _capturing.pop(stream_handle, None)


@atexit.register
def _drain():
    with _pending_lock:
        devices = {device for _function, device in _pending.values()}
    for device in devices:
        try:
            synchronize(device)
        except HalError:
            pass  # the error belongs to work whose results nobody can read any more
    release_deferred()
