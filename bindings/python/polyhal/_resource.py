"""Base of the objects that own a polyhal handle (streams, events, modules, buffers)."""
import sys


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
        try:
            self.close()
        except Exception:
            pass
