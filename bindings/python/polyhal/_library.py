"""Finds and loads libpolyhal.

Search order:
1. ``POLYHAL_LIBRARY``: the path of the library. When set it is the only candidate: a library
   the user named is never silently replaced by another one.
2. ``lib/`` inside this package, where a self-contained install copies libpolyhal.so (with its
   ``polyhal/`` plugin folder beside it).
3. The system loader (``libpolyhal.so.0``, then ``libpolyhal.so``): LD_LIBRARY_PATH, the
   ld.so cache, the default folders.
"""
import ctypes
import os

LIBRARY_ENV = "POLYHAL_LIBRARY"
SONAMES = ("libpolyhal.so.0", "libpolyhal.so")


def candidates(environ=os.environ):
    """The paths or names tried, in order."""
    explicit = environ.get(LIBRARY_ENV)
    if explicit:
        return [explicit]
    bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")
    return [os.path.join(bundled, name) for name in SONAMES] + list(SONAMES)


def load(environ=os.environ):
    """Loads the first candidate that loads; ImportError listing every attempt otherwise."""
    attempts = []
    for candidate in candidates(environ):
        if os.sep in candidate and not os.path.exists(candidate):
            attempts.append(f"{candidate}: no such file")
            continue
        try:
            return ctypes.CDLL(candidate)
        except OSError as error:
            attempts.append(f"{candidate}: {error}")
    tried = "\n  ".join(attempts)
    raise ImportError(
        f"polyhal: cannot load libpolyhal. Tried:\n  {tried}\n"
        f"Set {LIBRARY_ENV} to the path of libpolyhal.so (e.g. <build>/lib/libpolyhal.so), "
        "or make it visible to the system loader (LD_LIBRARY_PATH, ldconfig).")
