"""ctypes declarations of <polyhal/hal.h>: structures, prototypes and error checking.

Every function returning a halError gets an ``errcheck`` that raises the matching HalError
subclass with halGetLastErrorMessage(), read on the same thread right after the failed call.
halQueryStream and halQueryEvent return True (done) or False (HAL_ERROR_NOT_READY) instead.
ctypes releases the GIL during each call, so a blocking call never stalls other Python threads.

Under checked mode (POLYHAL_CHECK set, docs/check.md) every call first names its Python call site
(halCheckSetCallSite), so that findings quote the program's own line.
"""
import ctypes
import operator
import os
import sys
from ctypes import (POINTER, c_char, c_char_p, c_float, c_int, c_int32, c_size_t, c_ubyte,
                    c_uint32, c_uint64, c_void_p)

from . import _library
from .errors import error_for

HAL_SUCCESS = 0
HAL_ERROR_NOT_READY = 4

HAL_EVENT_DISABLE_TIMING = 1
HAL_EVENT_BLOCKING_SYNC = 2
HAL_EVENT_INTERPROCESS = 4
HAL_CAPTURE_MODE_GLOBAL = 0
HAL_CAPTURE_MODE_THREAD_LOCAL = 1
HAL_CAPTURE_MODE_RELAXED = 2
HAL_CAPTURE_STATUS_NONE = 0
HAL_CAPTURE_STATUS_ACTIVE = 1
HAL_CAPTURE_STATUS_INVALIDATED = 2

HAL_IPC_HANDLE_SIZE = 128

HAL_MEMCPY_HOST_TO_DEVICE = 1
HAL_MEMCPY_DEVICE_TO_HOST = 2
HAL_MEMCPY_DEVICE_TO_DEVICE = 3

HAL_KERNEL_ARG_READ_WRITE = 0
HAL_KERNEL_ARG_READ_ONLY = 1
HAL_KERNEL_ARG_WRITE_ONLY = 2
HAL_KERNEL_ARG_NO_ACCESS = 3

halError = c_int
INT_MAX = 2 ** (8 * ctypes.sizeof(c_int) - 1) - 1
SIZE_MAX = 2 ** (8 * ctypes.sizeof(c_size_t)) - 1


def byte_count(nbytes):
    """`nbytes` as an allocation size: TypeError for a non-integer, ValueError outside
    1..SIZE_MAX."""
    try:
        nbytes = operator.index(nbytes)
    except TypeError:
        raise TypeError(f"nbytes must be an int, not {type(nbytes).__name__}") from None
    if not 0 < nbytes <= SIZE_MAX:
        raise ValueError(f"nbytes must be in 1..{SIZE_MAX}, not {nbytes}")
    return nbytes
Handle = c_void_p  # halStream, halEvent, halModule, halFunction, halGraph: opaque pointers


class DeviceProperties(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("name", c_char * 256),
        ("backend", c_char * 32),
        ("ordinal", c_int),
        ("backendOrdinal", c_int),
        ("totalMemory", c_uint64),
        ("computeUnits", c_uint32),
        ("maxThreadsPerBlock", c_uint32),
        ("maxSharedMemoryPerBlock", c_uint64),
        ("capabilities", c_uint64),
        ("maxKernelArgumentBytes", c_uint64),
        ("dlpackDeviceType", c_int32),
        ("moduleImageKinds", c_char * 64),
    ]


class MemPoolStats(ctypes.Structure):
    _fields_ = [("size", c_size_t)] + [
        (name, c_uint64)
        for name in ("bytesInUse", "peakBytesInUse", "bytesReserved", "peakBytesReserved",
                     "bytesCached", "bytesPending", "reusedSameStream", "reusedProvenOrder",
                     "reusedObservedComplete", "newSegments", "oomSynchronized",
                     "backendAllocations", "backendFrees")
    ]


class Memcpy3DParams(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("dst", c_void_p),
        ("dstPitch", c_size_t),
        ("dstSlicePitch", c_size_t),
        ("src", c_void_p),
        ("srcPitch", c_size_t),
        ("srcSlicePitch", c_size_t),
        ("width", c_size_t),
        ("height", c_size_t),
        ("depth", c_size_t),
        ("kind", c_int),
    ]


class IpcHandle(ctypes.Structure):
    """halIpcMemHandle and halIpcEventHandle: plain bytes, passed by value."""

    _fields_ = [("reserved", c_ubyte * HAL_IPC_HANDLE_SIZE)]

    @classmethod
    def from_bytes(cls, data):
        data = bytes(data)
        if len(data) != HAL_IPC_HANDLE_SIZE:
            raise ValueError(f"an IPC handle has {HAL_IPC_HANDLE_SIZE} bytes, not {len(data)}")
        return cls.from_buffer_copy(data)


class Dim3(ctypes.Structure):
    _fields_ = [("x", c_uint32), ("y", c_uint32), ("z", c_uint32)]


class KernelArg(ctypes.Structure):
    _fields_ = [("value", c_void_p), ("size", c_size_t)]


class KernelArgUse(ctypes.Structure):
    _fields_ = [("access", ctypes.c_int), ("bytes", c_size_t)]


HostFn = ctypes.CFUNCTYPE(None, c_void_p)

_PROTOTYPES = {
    "halGetErrorName": (c_char_p, [halError]),
    "halGetErrorString": (c_char_p, [halError]),
    "halGetLastErrorMessage": (c_char_p, []),
    "halGetBackendName": (halError, [POINTER(c_char_p)]),
    "halGetDeviceCount": (halError, [POINTER(c_int)]),
    "halSetDevice": (halError, [c_int]),
    "halGetDevice": (halError, [POINTER(c_int)]),
    "halGetDeviceProperties": (halError, [c_int, POINTER(DeviceProperties)]),
    "halSynchronizeDevice": (halError, []),
    "halGetMemInfo": (halError, [POINTER(c_size_t), POINTER(c_size_t)]),
    "halDeviceCanAccessPeer": (halError, [POINTER(c_int), c_int, c_int]),
    "halDeviceEnablePeerAccess": (halError, [c_int, c_uint32]),
    "halDeviceDisablePeerAccess": (halError, [c_int]),
    "halCreateStreamWithConfig": (halError, [POINTER(Handle), c_int, c_uint32]),
    "halDestroyStream": (halError, [Handle]),
    "halSynchronizeStream": (halError, [Handle]),
    "halQueryStream": (halError, [Handle]),
    "halStreamWaitEvent": (halError, [Handle, Handle]),
    "halGetStreamPriorityRange": (halError, [POINTER(c_int), POINTER(c_int)]),
    "halSetDefaultStreamMode": (halError, [c_int]),
    "halGetDefaultStreamMode": (halError, [POINTER(c_int)]),
    "halStreamGetNativeHandle": (halError, [Handle, POINTER(c_void_p)]),
    "halCreateEventWithFlag": (halError, [POINTER(Handle), c_uint32]),
    "halRecordEvent": (halError, [Handle, Handle]),
    "halQueryEvent": (halError, [Handle]),
    "halSynchronizeEvent": (halError, [Handle]),
    "halEventElapsedTime": (halError, [POINTER(c_float), Handle, Handle]),
    "halDestroyEvent": (halError, [Handle]),
    "halLaunchHostFunc": (halError, [Handle, HostFn, c_void_p]),
    "halFree": (halError, [c_void_p]),
    "halMallocHost": (halError, [POINTER(c_void_p), c_size_t]),
    "halFreeHost": (halError, [c_void_p]),
    "halMemcpyAsync": (halError, [c_void_p, c_size_t, c_void_p, c_size_t, c_int, Handle]),
    "halMemcpy3DAsync": (halError, [POINTER(Memcpy3DParams), Handle]),
    "halMallocAsync": (halError, [POINTER(c_void_p), c_size_t, Handle]),
    "halFreeAsync": (halError, [c_void_p, Handle]),
    "halRecordStream": (halError, [c_void_p, Handle]),
    "halMemPoolGetStats": (halError, [c_int, POINTER(MemPoolStats)]),
    "halMemPoolTrim": (halError, [c_int, c_size_t]),
    "halModuleLoadData": (halError, [POINTER(Handle), c_void_p, c_size_t]),
    "halModuleLoadFile": (halError, [POINTER(Handle), c_char_p]),
    "halModuleGetFunction": (halError, [POINTER(Handle), Handle, c_char_p]),
    "halModuleUnload": (halError, [Handle]),
    "halIpcGetMemHandle": (halError, [POINTER(IpcHandle), c_void_p]),
    "halIpcOpenMemHandle": (halError, [POINTER(c_void_p), IpcHandle, c_uint32]),
    "halIpcCloseMemHandle": (halError, [c_void_p]),
    "halIpcGetEventHandle": (halError, [POINTER(IpcHandle), Handle]),
    "halIpcOpenEventHandle": (halError, [POINTER(Handle), IpcHandle]),
    "halLaunchKernel": (halError, [Handle, Dim3, Dim3, c_size_t, POINTER(KernelArg), c_uint32,
                                   Handle]),
    "halStreamBeginCapture": (halError, [Handle, c_int]),
    "halStreamEndCapture": (halError, [Handle, POINTER(Handle)]),
    "halStreamGetCaptureInfo": (halError, [Handle, POINTER(c_int)]),
    "halGraphLaunch": (halError, [Handle, Handle]),
    "halGraphDestroy": (halError, [Handle]),
    "halLaunchKernelWithAccess": (halError, [Handle, Dim3, Dim3, c_size_t, POINTER(KernelArg),
                                             POINTER(c_int), c_uint32, Handle]),
    "halLaunchKernelWithUses": (halError, [Handle, Dim3, Dim3, c_size_t, POINTER(KernelArg),
                                           POINTER(KernelArgUse), c_uint32, Handle]),
    "halCheckGetEnabled": (halError, [POINTER(c_uint32)]),
    "halCheckGetFindingCount": (halError, [POINTER(c_uint64)]),
    "halCheckSetCallSite": (halError, [c_char_p]),
    "halTraceStart": (halError, [c_char_p]),
    "halTraceStop": (halError, []),
    "halTraceRangePush": (halError, [c_char_p]),
    "halTraceRangePop": (halError, []),
}

_QUERIES = ("halQueryStream", "halQueryEvent")

hal = _library.load()


def _raise_on_error(result, function, _arguments):
    if result != HAL_SUCCESS:
        detail = _last_detail(result)  # first: it belongs to the thread's latest failed call
        raise error_for(result, hal.halGetErrorName(result).decode(), detail, function.__name__)
    return result


def _done_or_not_ready(result, function, arguments):
    if result == HAL_ERROR_NOT_READY:
        return False
    _raise_on_error(result, function, arguments)
    return True


def _last_detail(result):
    detail = hal.halGetLastErrorMessage().decode(errors="replace")
    return detail or hal.halGetErrorString(result).decode()


for _name, (_restype, _argtypes) in _PROTOTYPES.items():
    _function = getattr(hal, _name)
    _function.restype = _restype
    _function.argtypes = _argtypes
    if _restype is halError:
        _function.errcheck = _done_or_not_ready if _name in _QUERIES else _raise_on_error
del _name, _restype, _argtypes, _function


class _CallSiteNaming:
    """The library as checked mode sees it from Python: each hal* call is preceded by
    halCheckSetCallSite with the innermost frame outside this package, and followed by
    halCheckSetCallSite(NULL), so that C code calling polyhal later on the same thread is not
    quoted at a stale Python line."""

    def __init__(self, library):
        self._library = library
        self._set_site = library.halCheckSetCallSite

    def __getattr__(self, name):
        function = getattr(self._library, name)
        if not name.startswith("hal") or name.startswith("halCheck") or name.startswith(
                "halGet"):
            return function
        set_site = self._set_site

        def named(*args):
            frame = sys._getframe(1)
            while frame is not None and frame.f_globals.get("__name__", "").startswith("polyhal"):
                frame = frame.f_back
            if frame is None:
                return function(*args)
            code = frame.f_code
            set_site(f"python: {code.co_filename}:{frame.f_lineno} in {code.co_name}"
                     .encode(errors="replace"))
            try:
                return function(*args)
            finally:
                set_site(None)

        named.__name__ = name
        setattr(self, name, named)  # looked up once per name
        return named


if os.environ.get("POLYHAL_CHECK"):
    hal = _CallSiteNaming(hal)
