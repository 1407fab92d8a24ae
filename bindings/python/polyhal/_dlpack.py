"""DLPack in ctypes. Export: a PyCapsule holding a DLManagedTensor (DLPack 0.x, capsule
"dltensor") or, for consumers that ask for DLPack 1.0 with max_version, a
DLManagedTensorVersioned (capsule "dltensor_versioned", writable: numpy >= 2.1 then gives a
writable array; older numpy marks every array from DLPack read-only). Import: the memory of
another library's tensor, taken from its capsule in place (import_tensor).

The capsule protocol (https://dmlc.github.io/dlpack/latest/python_spec.html): a consumer
renames the capsule to "used_dltensor[_versioned]" and later calls the tensor's deleter itself;
a capsule that was never consumed calls the deleter from its own destructor. The deleter drops
the export's entry, which is what kept the owner (a Buffer) and the tensor's memory alive.
"""
import ctypes
import math
from ctypes import c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p


KDL_CPU = 1
KDL_CPU_PINNED = 3  # page-locked host memory (cudaMallocHost's)
_KDL_CUDA = 2
_KDL_UINT = 1
_FLAG_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY
LEGACY_NAME = b"dltensor"
VERSIONED_NAME = b"dltensor_versioned"
# A consumer renames the capsule it takes. PyCapsule_SetName keeps the pointer, not a copy: these
# bytes objects live as long as the module.
_USED_NAMES = {LEGACY_NAME: b"used_dltensor", VERSIONED_NAME: b"used_dltensor_versioned"}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(c_int64)),
        ("strides", ctypes.POINTER(c_int64)),  # NULL: compact row-major
        ("byte_offset", c_uint64),
    ]


Deleter = ctypes.CFUNCTYPE(None, c_void_p)  # void (*)(DLManagedTensor[Versioned]*)
_GilHoldingDeleter = ctypes.PYFUNCTYPE(None, c_void_p)  # the same, called without releasing it


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", Deleter)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p), ("deleter", Deleter),
                ("flags", c_uint64), ("dl_tensor", DLTensor)]


_exports = {}  # address of a managed tensor -> (the struct, its shape array, release callback)


def _delete(address):
    _struct, _shape, release = _exports.pop(address)
    release()


_deleter = Deleter(_delete)

# A handle of its own, so that the prototypes set here do not change ctypes.pythonapi's.
_python = ctypes.PyDLL(None)
_capsule_new = _python.PyCapsule_New
_capsule_is_valid = _python.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [c_void_p, ctypes.c_char_p]
_capsule_get_pointer = _python.PyCapsule_GetPointer
_capsule_get_pointer.restype = c_void_p
_capsule_get_pointer.argtypes = [c_void_p, ctypes.c_char_p]
_check_no_exception_pending = _python.Py_IsInitialized  # raises the exception pending, if any
_check_no_exception_pending.restype = ctypes.c_int
_check_no_exception_pending.argtypes = []
_capsule_set_name = _python.PyCapsule_SetName
_capsule_set_name.restype = ctypes.c_int
_capsule_set_name.argtypes = [c_void_p, ctypes.c_char_p]
_CapsuleDestructor = ctypes.CFUNCTYPE(None, c_void_p)
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [c_void_p, ctypes.c_char_p, _CapsuleDestructor]


@_CapsuleDestructor
def _destroy_capsule(capsule):
    # A consumer that rejects the capsule (numpy, for memory the host cannot read) drops it
    # with its own exception pending. A ctypes callback cannot keep that exception pending: any
    # call made here would fail. So it is taken first, the export is released, and it is raised
    # again at the end, which reports it through sys.unraisablehook; the consumer then raises
    # SystemError instead of its own error.
    pending = None
    try:
        _check_no_exception_pending()
    except BaseException as error:
        pending = error
    # Still under its original name: no consumer took ownership, so the capsule deletes it.
    for name in (LEGACY_NAME, VERSIONED_NAME):
        if _capsule_is_valid(capsule, name):
            _delete(_capsule_get_pointer(capsule, name))
    if pending is not None:
        raise pending


def device_of(props):
    """(DLDeviceType, device id) of memory on a device with these DeviceProperties, as its backend
    reports it (kDLCPU for host-accessible devices)."""
    if props.dlpack_device_type == KDL_CPU:
        return (KDL_CPU, 0)
    if props.dlpack_device_type == 0:
        raise BufferError(f"DLPack has no device type for polyhal backend '{props.backend}'")
    return (props.dlpack_device_type, props.backend_ordinal)


class InPlaceExport:
    """An owner of memory (`_ptr`, `_nbytes`) that exports it through DLPack without copying,
    counting the exports alive so that close() can refuse to free memory a consumer holds."""

    _live_exports = 0

    def _export(self, device, max_version, dl_device, copy, instead):
        """The capsule of __dlpack__(); `instead` names what gives a copy."""
        if copy:
            raise BufferError(f"polyhal.{type(self).__name__} exports its memory in place; "
                              f"copy=True is not supported (use {instead})")
        if dl_device is not None and tuple(dl_device) != device:
            raise BufferError(f"the memory is on DLPack device {device}, not {dl_device}")
        versioned = max_version is not None and max_version[0] >= 1
        capsule = export_bytes(self._ptr, self._nbytes, device, versioned, self._export_released)
        self._live_exports += 1
        return capsule

    def _export_released(self):
        self._live_exports -= 1

    def _require_unexported(self):
        if not self._closed and self._live_exports:
            raise ValueError(f"the {self._kind} is still exported through DLPack "
                             f"({self._live_exports} live export(s)); it cannot be freed")


def export_bytes(data, nbytes, device, versioned, release):
    """A capsule describing `nbytes` bytes at `data` as a 1-D uint8 tensor on `device`.
    release() runs once the consumer (or the unconsumed capsule) lets go of it."""
    shape = (c_int64 * 1)(nbytes)
    tensor = DLTensor(data=data, device=DLDevice(*device), ndim=1,
                      dtype=DLDataType(code=_KDL_UINT, bits=8, lanes=1), shape=shape,
                      strides=None, byte_offset=0)
    if versioned:
        managed = DLManagedTensorVersioned(version=DLPackVersion(1, 0), manager_ctx=None,
                                           deleter=_deleter, flags=0, dl_tensor=tensor)
    else:
        managed = DLManagedTensor(dl_tensor=tensor, manager_ctx=None, deleter=_deleter)
    address = ctypes.addressof(managed)
    _exports[address] = (managed, shape, release)
    try:
        return _capsule_new(address, VERSIONED_NAME if versioned else LEGACY_NAME,
                            _destroy_capsule)
    except BaseException:
        _exports.pop(address)
        raise


def stream_argument(device, native_stream):
    """What a consumer passes as __dlpack__(stream=...) for memory on DLPack `device`, to have
    the producer order its work before the consumer's stream (the Python array API's rule):
    None for host memory, whatever the stream; otherwise the stream's native handle (1 for
    CUDA's legacy default stream, handle 0)."""
    if device[0] in (KDL_CPU, KDL_CPU_PINNED):
        return None
    if device[0] == _KDL_CUDA and native_stream == 0:
        return 1
    return native_stream


def import_tensor(tensor, stream):
    """(address, byte count, release) of the memory of `tensor`, an object with __dlpack__,
    taken in place. `stream` is the __dlpack__ stream argument (None: not passed). release()
    hands the memory back to the producer, once."""
    kwargs = {} if stream is None else {"stream": stream}
    try:
        capsule = tensor.__dlpack__(max_version=(1, 0), **kwargs)
    except TypeError:  # a producer of DLPack before 1.0, without max_version
        capsule = tensor.__dlpack__(**kwargs)
    raw = id(capsule)  # the capsule's address (CPython), as the capsule functions take it
    for name in (VERSIONED_NAME, LEGACY_NAME):
        if _capsule_is_valid(raw, name):
            break
    else:
        raise BufferError("__dlpack__() did not return an unconsumed DLPack capsule")
    address = _capsule_get_pointer(raw, name)
    if name == VERSIONED_NAME:
        managed = DLManagedTensorVersioned.from_address(address)
        if managed.version.major != 1:
            raise BufferError(f"DLPack {managed.version.major}.{managed.version.minor} is not "
                              f"supported (polyhal reads 1.x and 0.x)")
        read_only = bool(managed.flags & _FLAG_READ_ONLY)
    else:
        managed = DLManagedTensor.from_address(address)
        read_only = False
    described = managed.dl_tensor
    nbytes = _compact_bytes(described)
    if read_only:
        raise BufferError("the tensor is exported read-only, and polyhal's streams may write "
                          "any buffer they are given")
    # Taken: from here on the deleter is polyhal's to call, not the capsule's.
    _capsule_set_name(raw, _USED_NAMES[name])
    deleter_address = ctypes.cast(managed.deleter, c_void_p).value
    # Called holding the GIL: deleters such as numpy's drop Python references without taking it.
    deleter = _GilHoldingDeleter(deleter_address) if deleter_address else None
    released = []

    def release():
        if not released and deleter is not None:
            released.append(True)
            deleter(address)

    return (described.data or 0) + described.byte_offset, nbytes, release


def _compact_bytes(tensor):
    """The byte count of `tensor`, which must be laid out without gaps (polyhal's buffers are
    contiguous bytes)."""
    shape = tensor.shape[:tensor.ndim]
    bits = tensor.dtype.bits * tensor.dtype.lanes
    if bits % 8:
        raise BufferError(f"elements of {bits} bits do not fill whole bytes")
    if tensor.strides:  # NULL strides: compact row-major
        expected = 1
        for extent, stride in zip(reversed(shape), reversed(tensor.strides[:tensor.ndim])):
            if extent != 1 and stride != expected:
                raise BufferError("the tensor is not contiguous (row-major, without gaps): "
                                  "make it so first (torch: .contiguous())")
            expected *= extent
    return math.prod(shape) * bits // 8
