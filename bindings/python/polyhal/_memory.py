"""polyhal.Buffer: device memory from the stream-aware pool, and the pool's statistics."""
import ctypes
import operator

import numpy

from . import _dlpack, _graph_owner, _ipc
from ._capi import (HAL_MEMCPY_DEVICE_TO_DEVICE, HAL_MEMCPY_DEVICE_TO_HOST,
                    HAL_MEMCPY_HOST_TO_DEVICE, IpcHandle, Memcpy3DParams, MemPoolStats,
                    byte_count, hal)
from ._current import current_stream, resolve
from ._device import Capability, device_index, get_device, get_device_properties
from ._event import Event
from ._host_buffer import HostBuffer, host_buffer_of, keep_until_done
from ._resource import Resource


class Buffer(_dlpack.InPlaceExport, Resource):
    """`nbytes` bytes of device memory, allocated with halMallocAsync in the order of `stream`
    (default: the current stream) and freed with halFreeAsync in that same order when closed or
    garbage collected. Another stream that uses the buffer must be ordered after the allocation
    (an event, wait_stream); the pool then tracks that use by itself, so a freed buffer is not
    handed to other work while a stream may still read it.

    Another process can use the same memory: pickle the buffer (a multiprocessing queue or
    pipe does) and the receiving process gets a Buffer over it, as torch.multiprocessing shares
    CUDA tensors. The work enqueued on the current stream before pickling is finished before
    the receiver's current stream uses the buffer (an interprocess event, where the device has
    one; otherwise pickling waits for that stream). This process must keep the buffer open
    until every receiver has closed its Buffer; later work between the processes is ordered with
    Event(interprocess=True). A received buffer is closed with halIpcCloseMemHandle, which does
    not free the memory.
    """

    _kind = "buffer"
    # Defaults of a buffer from the pool, as class attributes: allocation stays cheap.
    _graph_owned = False
    _graph_owner = None
    _borrowed = None  # for memory of another library's tensor: what hands it back
    _imported = False  # opened from another process
    _ipc_event = None  # the interprocess event pickling records
    _dlpack_device = None

    def __init__(self, nbytes, stream=None):
        nbytes = byte_count(nbytes)
        stream = resolve(stream)
        ptr = ctypes.c_void_p()
        with stream._selected():
            hal.halMallocAsync(ctypes.byref(ptr), nbytes, stream._handle)
            # Allocated in a capture: graph-owned memory, which the graph releases.
            self._graph_owned = stream._is_capturing_selected()
        if self._graph_owned:
            # The memory is the graph's: it stays valid while this buffer is open.
            self._graph_owner = _graph_owner.owner_for(stream._handle)
        self._ptr = ptr.value
        self._nbytes = nbytes
        self._stream = stream
        self._closed = False

    @classmethod
    def from_ipc_handle(cls, handle, nbytes):
        """Opens memory another process exported (ipc_handle()) on the current device:
        `nbytes` bytes from the start of that buffer. Not ordered with the exporter's work: use
        an interprocess Event for that."""
        nbytes = byte_count(nbytes)
        ptr = ctypes.c_void_p()
        hal.halIpcOpenMemHandle(ctypes.byref(ptr), IpcHandle.from_bytes(handle), 0)
        return cls._over(ptr.value, nbytes, resolve(None), _imported=True)

    @classmethod
    def from_dlpack(cls, tensor, *, stream=None):
        """A buffer over the memory of `tensor` (a torch tensor, a numpy array, anything with
        __dlpack__), taken in place as contiguous bytes. The memory must be on the device of
        `stream` (default: the current stream) as DLPack names it; the producer orders its own
        work before `stream` (the stream argument of __dlpack__), and keeps the memory until the
        buffer is closed, which first waits for the work enqueued on `stream`."""
        stream = resolve(stream)
        expected = _dlpack.device_of(get_device_properties(stream.device))
        given = tuple(tensor.__dlpack_device__())
        host = (_dlpack.KDL_CPU, _dlpack.KDL_CPU_PINNED)
        if given != expected and not (expected[0] == _dlpack.KDL_CPU and given[0] in host):
            raise BufferError(f"the tensor is on DLPack device {given}; polyhal device "
                              f"{stream.device} ({get_device_properties(stream.device).backend})"
                              f" takes memory of DLPack device {expected}")
        native = 0 if given[0] in host else stream.native_handle
        ptr, nbytes, release = _dlpack.import_tensor(
            tensor, _dlpack.stream_argument(given, native))
        return cls._over(ptr, nbytes, stream, _dlpack_device=expected, _borrowed=release)

    @classmethod
    def _over(cls, ptr, nbytes, stream, **attributes):
        """A buffer over memory the pool did not allocate; `attributes` say whose it is."""
        buffer = cls.__new__(cls)
        buffer._ptr = ptr
        buffer._nbytes = nbytes
        buffer._stream = stream
        for name, value in attributes.items():
            setattr(buffer, name, value)
        buffer._closed = False
        return buffer

    @property
    def borrowed(self):
        """True for a buffer over another library's memory (from_dlpack)."""
        return self._borrowed is not None

    def ipc_handle(self):
        """The bytes another process passes to Buffer.from_ipc_handle() to open this buffer."""
        self._require_open()
        if self._imported:
            raise ValueError("a buffer opened from another process cannot be exported again")
        if self._borrowed is not None:
            raise ValueError("a buffer over another library's memory (from_dlpack) cannot be "
                             "shared with other processes: polyhal did not allocate it")
        handle = IpcHandle()
        hal.halIpcGetMemHandle(ctypes.byref(handle), self._ptr)
        data = bytes(handle.reserved)
        _ipc.remember(data, self)
        return data

    @property
    def imported(self):
        """True for a buffer opened from another process's memory."""
        return self._imported

    def __reduce__(self):
        handle = self.ipc_handle()
        stream = current_stream(self.device)
        ready = None
        if Capability.IPC_EVENTS in get_device_properties(self.device).capabilities:
            if self._ipc_event is None:
                with stream._selected():  # an event of the buffer's device
                    self._ipc_event = Event(interprocess=True)
            self._ipc_event.record(stream)
            ready = self._ipc_event.ipc_handle()
        else:
            stream.synchronize()
        return _ipc.reduce_shared(_rebuild_buffer, handle, self._nbytes, ready)

    @property
    def ptr(self):
        """The device address, as an int."""
        self._require_open()
        return self._ptr

    @property
    def nbytes(self):
        return self._nbytes

    @property
    def stream(self):
        """The stream the buffer was allocated on, and is freed on."""
        return self._stream

    @property
    def device(self):
        return self._stream.device

    def copy_from(self, source, stream=None, non_blocking=False):
        """Copies `source` to the start of the buffer on `stream` (default: the current stream).

        From another Buffer the copy is enqueued and the call returns at once. From a HostBuffer
        (or a numpy view of one) with non_blocking=True it is enqueued too, as torch's
        copy_(pinned, non_blocking=True): the HostBuffer stays alive until the copy has run,
        and writing it before then races with the copy. From other host memory (a numpy array,
        bytes, bytearray, memoryview), or without non_blocking, the call returns once the copy
        is done, because the stream must not read host memory that Python may free meanwhile.
        """
        stream = resolve(stream)
        self._require_open()
        if isinstance(source, Buffer):
            source._require_open()
            self._check_fits(source._nbytes)
            with stream._selected():
                hal.halMemcpyAsync(self._ptr, self._nbytes, source._ptr, source._nbytes,
                                   HAL_MEMCPY_DEVICE_TO_DEVICE, stream._handle)
            return
        host = _host_bytes(source.numpy() if isinstance(source, HostBuffer) else source)
        self._check_fits(host.nbytes)
        self._host_copy(stream, self._ptr, host, HAL_MEMCPY_HOST_TO_DEVICE, non_blocking)

    def copy_to(self, target, stream=None, non_blocking=False):
        """Copies the buffer's leading bytes into `target`, a HostBuffer or a writable
        C-contiguous numpy array, filling it, on `stream` (default: the current stream). With
        non_blocking=True into a HostBuffer (or a numpy view of one) the call returns at once
        and the HostBuffer stays alive until the copy has run: read it after synchronising.
        Otherwise the call returns once the copy is done."""
        stream = resolve(stream)
        self._require_open()
        host = target.numpy() if isinstance(target, HostBuffer) else target
        if not isinstance(host, numpy.ndarray):
            raise TypeError(f"copy_to() needs a polyhal.HostBuffer or a numpy array, not "
                            f"{type(target).__name__}")
        if not (host.flags.c_contiguous and host.flags.writeable):
            raise ValueError("copy_to() needs a writable C-contiguous array")
        self._check_fits(host.nbytes)
        self._host_copy(stream, host.ctypes.data, host, HAL_MEMCPY_DEVICE_TO_HOST, non_blocking)

    def _host_copy(self, stream, dst, host, kind, non_blocking):
        """One copy between the buffer and the host array `host` (`dst` the destination), left
        in flight only where the host end is a HostBuffer and the caller asked for it."""
        pinned = host_buffer_of(host) if non_blocking else None
        src = host.ctypes.data if kind == HAL_MEMCPY_HOST_TO_DEVICE else self._ptr
        dst_max = self._nbytes if kind == HAL_MEMCPY_HOST_TO_DEVICE else host.nbytes
        with stream._selected():
            hal.halMemcpyAsync(dst, dst_max, src, host.nbytes, kind, stream._handle)
            if pinned is None:
                hal.halSynchronizeStream(stream._handle)
                return
        keep_until_done(pinned, stream)

    def to_numpy(self, dtype=numpy.uint8, shape=None, stream=None):
        """A new numpy array with the buffer's leading bytes, copied in the order of `stream`
        (default: the current stream) once the work before it has finished."""
        stream = resolve(stream)
        self._require_open()
        dtype = numpy.dtype(dtype)
        if shape is None:
            shape = (self._nbytes // dtype.itemsize,)
        host = numpy.empty(shape, dtype)
        self._check_fits(host.nbytes)
        with stream._selected():
            hal.halMemcpyAsync(host.ctypes.data, host.nbytes, self._ptr, host.nbytes,
                               HAL_MEMCPY_DEVICE_TO_HOST, stream._handle)
            hal.halSynchronizeStream(stream._handle)
        return host

    def copy_from_pitched(self, source, pitch, slice_pitch=None, offset=0, stream=None):
        """Copies a 2-D or 3-D numpy array into a pitched layout of the buffer, in the order of
        `stream` (default: the current stream), and returns once it is done: row y of slice z
        goes to byte offset + z * slice_pitch + y * pitch. The array's rows and slices may lie
        apart (a view into a larger array: its strides are the source pitches); only its last
        axis must be contiguous. One halMemcpy3DAsync (aclrtMemcpy2d, cudaMemcpy2D/3D)."""
        stream = resolve(stream)
        self._require_open()
        host = _pitched_host_array(source)
        width, height, depth, host_pitch, host_slice = _box_of(host)
        self._pitched_copy(stream, self._at(offset), pitch, _slice_pitch(slice_pitch, depth),
                           host.ctypes.data, host_pitch, host_slice, (width, height, depth),
                           HAL_MEMCPY_HOST_TO_DEVICE)

    def to_numpy_pitched(self, shape, pitch, dtype=numpy.uint8, slice_pitch=None, offset=0,
                         stream=None):
        """A new C-contiguous numpy array of `shape` (2-D or 3-D) read from a pitched layout of
        the buffer (copy_from_pitched's layout), in the order of `stream` once the work before
        it has finished."""
        stream = resolve(stream)
        self._require_open()
        host = numpy.empty(shape, numpy.dtype(dtype))
        if host.ndim not in (2, 3):
            raise ValueError(f"shape must have 2 or 3 dimensions, not {host.ndim}")
        width, height, depth, host_pitch, host_slice = _box_of(host)
        self._pitched_copy(stream, host.ctypes.data, host_pitch, host_slice, self._at(offset),
                           pitch, _slice_pitch(slice_pitch, depth), (width, height, depth),
                           HAL_MEMCPY_DEVICE_TO_HOST)
        return host

    def _at(self, offset):
        offset = operator.index(offset)
        if not 0 <= offset < self._nbytes:
            raise ValueError(f"offset must be in 0..{self._nbytes - 1}, not {offset}")
        return self._ptr + offset

    @staticmethod
    def _pitched_copy(stream, dst, dst_pitch, dst_slice, src, src_pitch, src_slice, extent,
                      kind):
        width, height, depth = extent
        params = Memcpy3DParams(size=ctypes.sizeof(Memcpy3DParams), dst=dst,
                                dstPitch=operator.index(dst_pitch), dstSlicePitch=dst_slice,
                                src=src, srcPitch=operator.index(src_pitch),
                                srcSlicePitch=src_slice, width=width, height=height,
                                depth=depth, kind=kind)
        with stream._selected():
            hal.halMemcpy3DAsync(ctypes.byref(params), stream._handle)
            hal.halSynchronizeStream(stream._handle)

    def record_stream(self, stream):
        """Declares that work submitted to `stream` so far uses the buffer in a way polyhal
        cannot see (a pointer inside a struct), so the buffer is not reused before it ends."""
        if stream is None:
            raise TypeError("record_stream() needs a polyhal.Stream, not None")
        stream = resolve(stream)
        self._require_open()
        with stream._selected():
            hal.halRecordStream(self._ptr, stream._handle)

    def __dlpack_device__(self):
        if self._dlpack_device is None:
            self._dlpack_device = _dlpack.device_of(get_device_properties(self.device))
        return self._dlpack_device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Exports the buffer as a 1-D uint8 DLPack tensor without copying (numpy.from_dlpack
        reads CPU-backend memory in place); a DLPack 1.0 capsule when the consumer's
        max_version allows it. The export keeps the buffer alive. Work enqueued on the current
        stream is finished first, unless the consumer passes stream=-1; work on other streams
        must be ordered before it by the caller."""
        self._require_open()
        capsule = self._export(self.__dlpack_device__(), max_version, dl_device, copy,
                               "to_numpy()")
        if stream != -1:
            current_stream(self.device).synchronize()
        return capsule

    def _check_fits(self, nbytes):
        if nbytes > self._nbytes:
            raise ValueError(f"{nbytes} bytes do not fit in a buffer of {self._nbytes} bytes")

    def close(self):
        """Frees the memory in the order of the allocating stream (of the device's default
        stream if that stream was closed first)."""
        self._require_unexported()
        super().close()

    def _release(self):
        if self._ipc_event is not None:
            self._ipc_event.close()
        if self._imported:
            hal.halIpcCloseMemHandle(self._ptr)
            return
        if self._borrowed is not None:
            try:
                if not self._stream.closed:
                    self._stream.synchronize()  # polyhal's last use, before the owner's next
            finally:
                self._borrowed()
            return
        if self._graph_owned:
            # Freed inside its capture, it ends its use in the graph; afterwards the graph keeps
            # it until its last holder (the Graph or a buffer of it) lets go.
            try:
                if not self._stream.closed:
                    with self._stream._selected():
                        if self._stream._is_capturing_selected():
                            hal.halFreeAsync(self._ptr, self._stream._handle)
            finally:
                if self._graph_owner is not None:
                    self._graph_owner.release()
            return
        if self._stream.closed:
            hal.halFree(self._ptr)
            return
        with self._stream._selected():
            hal.halFreeAsync(self._ptr, self._stream._handle)

    def __repr__(self):
        state = "closed" if self._closed else f"0x{self._ptr:x}"
        imported = " imported" if self._imported else " borrowed" if self.borrowed else ""
        return f"<polyhal.Buffer {state} nbytes={self._nbytes} device={self.device}{imported}>"


def _rebuild_buffer(handle, pid, nbytes, ready):
    """Unpickles a buffer: the original in its own process; elsewhere the memory opened, with
    the current stream waiting for the work the sender had enqueued."""
    original = _ipc.local_original(handle, pid, "buffer")
    if original is not None:
        return original
    buffer = Buffer.from_ipc_handle(handle, nbytes)
    if ready is not None:
        event = Event.from_ipc_handle(ready)
        try:
            current_stream().wait_event(event)
        finally:
            event.close()  # the wait already enqueued still holds
    return buffer


def _host_bytes(source):
    """`source` as a contiguous numpy array over host memory (a copy only if it was strided)."""
    if isinstance(source, numpy.ndarray):
        if source.dtype.hasobject:
            raise TypeError("copy_from() cannot copy an array of Python objects")
        return numpy.ascontiguousarray(source)
    try:
        return numpy.frombuffer(memoryview(source).cast("B"), dtype=numpy.uint8)
    except TypeError:
        raise TypeError(f"copy_from() needs a polyhal.Buffer, a numpy array or a bytes-like "
                        f"object, not {type(source).__name__}") from None


def _pitched_host_array(source):
    """`source` as a 2-D or 3-D numpy array whose last axis is contiguous (a copy otherwise)."""
    if not isinstance(source, numpy.ndarray):
        raise TypeError(f"copy_from_pitched() needs a numpy array, not {type(source).__name__}")
    if source.ndim not in (2, 3):
        raise ValueError(f"copy_from_pitched() needs a 2-D or 3-D array, not {source.ndim}-D")
    if source.dtype.hasobject:
        raise TypeError("copy_from_pitched() cannot copy an array of Python objects")
    if source.strides[-1] != source.itemsize or any(stride <= 0 for stride in source.strides):
        return numpy.ascontiguousarray(source)
    return source


def _box_of(array):
    """(width in bytes, rows, slices, row pitch, slice pitch) of a 2-D or 3-D array."""
    width = array.shape[-1] * array.itemsize
    height = array.shape[-2]
    depth = array.shape[0] if array.ndim == 3 else 1
    slice_pitch = array.strides[0] if array.ndim == 3 else 0
    return width, height, depth, array.strides[-2], slice_pitch


def _slice_pitch(slice_pitch, depth):
    if slice_pitch is None:
        if depth > 1:
            raise ValueError("a 3-D copy needs the buffer's slice_pitch")
        return 0
    return operator.index(slice_pitch)


_STATS = (
    ("bytes_in_use", "bytesInUse"),
    ("peak_bytes_in_use", "peakBytesInUse"),
    ("bytes_reserved", "bytesReserved"),
    ("peak_bytes_reserved", "peakBytesReserved"),
    ("bytes_cached", "bytesCached"),
    ("bytes_pending", "bytesPending"),
    ("reused_same_stream", "reusedSameStream"),
    ("reused_proven_order", "reusedProvenOrder"),
    ("reused_observed_complete", "reusedObservedComplete"),
    ("new_segments", "newSegments"),
    ("oom_synchronized", "oomSynchronized"),
    ("backend_allocations", "backendAllocations"),
    ("backend_frees", "backendFrees"),
)


def memory_stats(device=None):
    """The pool statistics of `device` (default: the current device) as a dict; byte counts are
    of blocks rounded to the pool's 512-byte granule."""
    stats = MemPoolStats(size=ctypes.sizeof(MemPoolStats))
    hal.halMemPoolGetStats(get_device() if device is None else device_index(device),
                           ctypes.byref(stats))
    return {key: getattr(stats, field) for key, field in _STATS}


def empty_cache(device=None):
    """Returns the pool's cached segments whose every use has finished to the backend."""
    hal.halMemPoolTrim(get_device() if device is None else device_index(device), 0)


def from_dlpack(tensor, *, stream=None):
    """Buffer.from_dlpack(tensor, stream=stream), as numpy.from_dlpack and torch.from_dlpack
    name the consumer's side."""
    return Buffer.from_dlpack(tensor, stream=stream)
