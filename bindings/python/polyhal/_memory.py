"""polyhal.Buffer: device memory from the stream-aware pool, and the pool's statistics."""
import ctypes
import operator

import numpy

from . import _dlpack
from ._capi import (HAL_MEMCPY_DEVICE_TO_DEVICE, HAL_MEMCPY_DEVICE_TO_HOST,
                    HAL_MEMCPY_HOST_TO_DEVICE, SIZE_MAX, Memcpy3DParams, MemPoolStats, hal)
from ._current import current_stream, resolve
from ._device import device_index, get_device, get_device_properties
from ._resource import Resource


class Buffer(Resource):
    """`nbytes` bytes of device memory, allocated with halMallocAsync in the order of `stream`
    (default: the current stream) and freed with halFreeAsync in that same order when closed or
    garbage collected. Another stream that uses the buffer must be ordered after the allocation
    (an event, wait_stream); the pool then tracks that use by itself, so a freed buffer is not
    handed to other work while a stream may still read it.
    """

    _kind = "buffer"

    def __init__(self, nbytes, stream=None):
        try:
            nbytes = operator.index(nbytes)
        except TypeError:
            raise TypeError(f"nbytes must be an int, not {type(nbytes).__name__}") from None
        if not 0 < nbytes <= SIZE_MAX:
            raise ValueError(f"nbytes must be in 1..{SIZE_MAX}, not {nbytes}")
        stream = resolve(stream)
        ptr = ctypes.c_void_p()
        with stream._selected():
            hal.halMallocAsync(ctypes.byref(ptr), nbytes, stream._handle)
        self._ptr = ptr.value
        self._nbytes = nbytes
        self._stream = stream
        self._live_exports = 0
        self._dlpack_device = None
        self._closed = False

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

    def copy_from(self, source, stream=None):
        """Copies `source` to the start of the buffer on `stream` (default: the current stream).

        From another Buffer the copy is enqueued and the call returns at once. From host memory
        (a numpy array, bytes, bytearray, memoryview) the call returns once the copy is done,
        because the stream must not read host memory that Python may free meanwhile.
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
        host = _host_bytes(source)
        self._check_fits(host.nbytes)
        with stream._selected():
            hal.halMemcpyAsync(self._ptr, self._nbytes, host.ctypes.data, host.nbytes,
                               HAL_MEMCPY_HOST_TO_DEVICE, stream._handle)
            hal.halSynchronizeStream(stream._handle)

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
        if copy:
            raise BufferError("polyhal.Buffer exports its memory in place; copy=True is not "
                              "supported (use to_numpy())")
        device = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != device:
            raise BufferError(f"the buffer lives on DLPack device {device}, not {dl_device}")
        if stream != -1:
            current_stream(self.device).synchronize()
        versioned = max_version is not None and max_version[0] >= 1
        capsule = _dlpack.export_bytes(self._ptr, self._nbytes, device, versioned,
                                       self._export_released)
        self._live_exports += 1
        return capsule

    def _export_released(self):
        self._live_exports -= 1

    def _check_fits(self, nbytes):
        if nbytes > self._nbytes:
            raise ValueError(f"{nbytes} bytes do not fit in a buffer of {self._nbytes} bytes")

    def close(self):
        """Frees the memory in the order of the allocating stream (of the device's default
        stream if that stream was closed first)."""
        if not self._closed and self._live_exports:
            raise ValueError(f"the buffer is still exported through DLPack "
                             f"({self._live_exports} live export(s)); it cannot be freed")
        super().close()

    def _release(self):
        if self._stream.closed:
            hal.halFree(self._ptr)
            return
        with self._stream._selected():
            hal.halFreeAsync(self._ptr, self._stream._handle)

    def __repr__(self):
        state = "closed" if self._closed else f"0x{self._ptr:x}"
        return f"<polyhal.Buffer {state} nbytes={self._nbytes} device={self.device}>"


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
