"""Base of the objects that own a polyhal handle (streams, events, modules, buffers).

Inside a host function polyhal refuses every call that reaches the device (NotPermittedError),
releases included. An object collected there (its last reference dropped by the host function,
or a garbage collection that happened to run on that thread) is therefore released later, by the
next launch_host_func or at exit, from a thread that may release it.
"""
import sys
import threading

_host_function = threading.local()  # .running: this thread is inside a host function
_deferred = []  # close methods of objects collected inside a host function
_deferred_lock = threading.Lock()


def running_host_function(running):
    """Marks the calling thread as running a host function, or no longer."""
    _host_function.running = running


def release_deferred():
    """Releases the objects collected inside host functions so far. Not inside a host
    function."""
    with _deferred_lock:
        pending = _deferred[:]
        del _deferred[:]
    for close in pending:
        try:
            close()
        except Exception:
            pass  # as in __del__: nobody is left to tell


class Resource:
    """Owns one handle: close() releases it once; any later use raises ValueError.

    Subclasses set ``_closed = False`` once they hold their handle and implement ``_release``.
    Until then the object counts as closed, so a failed constructor releases nothing.
    """

    _closed = True
    _kind = "object"

    @property
    def closed(self):
        return self._closed

    def close(self):
        """Releases the handle now instead of when the object is garbage collected."""
        if not self._closed:
            self._closed = True
            self._release()

    def _release(self):
        raise NotImplementedError

    def _require_open(self):
        if self._closed:
            raise ValueError(f"the {self._kind} is closed")

    def __del__(self, _is_finalizing=sys.is_finalizing):
        # At interpreter shutdown the library may already be unloaded: the process releases
        # everything anyway. An error here has nowhere to go, so it is dropped.
        if self._closed or _is_finalizing():
            return
        if getattr(_host_function, "running", False):
            # Keeps the object alive until release_deferred() closes it.
            with _deferred_lock:
                _deferred.append(self.close)
            return
        try:
            self.close()
        except Exception:
            pass
