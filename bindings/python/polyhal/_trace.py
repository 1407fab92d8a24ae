"""Timelines of polyhal's calls and stream operations (docs/trace.md): writing a trace, and
ranges of the program's own on it, as NVTX's ranges and torch.profiler.record_function.

A trace is written to a file in the Chrome Trace Event format, which Perfetto's UI and
chrome://tracing open; POLYHAL_TRACE=<path> writes one for the whole run instead.
"""
import contextlib
import os

from ._capi import hal


def trace_start(path):
    """Starts writing a trace to `path` (created or truncated). InvalidValueError if a trace is
    already being written or the file cannot be created."""
    hal.halTraceStart(os.fsencode(path))


def trace_stop():
    """Completes the trace being written and closes its file. Work still queued is not waited
    for: synchronize first for its device spans to be in the trace."""
    hal.halTraceStop()


@contextlib.contextmanager
def trace(path):
    """Writes a trace of the block to `path`: ``with polyhal.trace("run.json"): ...``"""
    trace_start(path)
    try:
        yield
    finally:
        trace_stop()


@contextlib.contextmanager
def trace_range(name):
    """A named range on the calling thread's track for the block:
    ``with polyhal.trace_range("step"): ...``. Ranges nest; they cost next to nothing while no
    trace is written."""
    hal.halTraceRangePush(str(name).encode())
    try:
        yield
    finally:
        hal.halTraceRangePop()
