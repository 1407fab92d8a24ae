"""Sharing buffers and events with other processes, as torch.multiprocessing shares CUDA tensors:
pickling a Buffer or an interprocess Event sends its IPC handle (halIpcGetMemHandle,
halIpcGetEventHandle); unpickling in another process opens it. Unpickled in the process that
pickled it, the original object comes back."""
import os
import weakref

_exported = weakref.WeakValueDictionary()  # handle bytes -> the Buffer or Event they name


def remember(handle, owner):
    """Notes that `handle` (bytes) names `owner`, for unpickling in this same process."""
    _exported[handle] = owner


def reduce_shared(rebuild, handle, *arguments):
    """The __reduce__ value of an object sent as `handle`."""
    return (rebuild, (handle, os.getpid()) + arguments)


def local_original(handle, pid, kind):
    """The object `handle` names if it was pickled in this process, else None."""
    if pid != os.getpid():
        return None
    original = _exported.get(handle)
    if original is None or original.closed:
        raise ValueError(f"the {kind} was pickled in this process and has been closed since")
    return original
