"""DLPack export: numpy reads and writes buffer memory in place; the export keeps the buffer
alive; the capsule protocol is honoured for consumers of DLPack 0.x and 1.0."""
import ctypes
import gc
import sys
import weakref

import numpy as np
import pytest

import polyhal
from helpers import require


def _writable(array):
    """`array`, or a writable alias of its memory: numpy before 2.1 marks every array it takes
    from DLPack read-only (DLPack 0.x has no read-only flag), so the test writes through an
    alias of the same memory made with numpy.ctypeslib."""
    if array.flags.writeable:
        return array
    raw = (ctypes.c_uint8 * array.nbytes).from_address(array.ctypes.data)
    return np.ctypeslib.as_array(raw).view(array.dtype).reshape(array.shape)


def test_numpy_reads_and_writes_buffer_memory_in_place():
    require(polyhal.Capability.HOST_ACCESSIBLE)
    buffer = polyhal.Buffer(64)
    buffer.copy_from(np.arange(16, dtype=np.float32))
    assert buffer.__dlpack_device__() == (1, 0)  # kDLCPU
    array = np.from_dlpack(buffer)
    assert array.dtype == np.uint8 and array.shape == (64,)
    assert array.__array_interface__["data"][0] == buffer.ptr  # no copy
    floats = array.view(np.float32)
    np.testing.assert_array_equal(floats, np.arange(16))

    buffer.copy_from(np.full(16, 7, dtype=np.float32))  # polyhal writes, numpy sees it
    np.testing.assert_array_equal(floats, np.full(16, 7))

    _writable(floats)[:] = np.arange(16)[::-1]  # numpy writes, polyhal reads it
    np.testing.assert_array_equal(buffer.to_numpy(np.float32), np.arange(16)[::-1])


def test_export_keeps_the_buffer_alive():
    require(polyhal.Capability.HOST_ACCESSIBLE)
    buffer = polyhal.Buffer(32)
    buffer.copy_from(bytes(range(32)))
    array = np.from_dlpack(buffer)
    with pytest.raises(ValueError, match="exported"):
        buffer.close()
    alive = weakref.ref(buffer)
    del buffer
    gc.collect()
    assert alive() is not None
    assert array.tolist() == list(range(32))
    del array
    gc.collect()
    assert alive() is None


def _capsule_api():
    api = ctypes.PyDLL(None)  # not ctypes.pythonapi, whose prototypes are shared
    api.PyCapsule_IsValid.restype = ctypes.c_int
    api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_SetName.restype = ctypes.c_int
    api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return api


class _DLTensor(ctypes.Structure):  # as dlpack.h declares it
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.CFUNCTYPE(None, ctypes.c_void_p)),
                ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


def test_dlpack_1_0_capsule_consumed_as_the_protocol_says():
    # What a DLPack 1.0 consumer (numpy >= 2.1, torch >= 2.4) does with the capsule.
    api = _capsule_api()
    buffer = polyhal.Buffer(48)
    capsule = buffer.__dlpack__(max_version=(1, 0))
    assert api.PyCapsule_IsValid(capsule, b"dltensor_versioned")
    address = api.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
    managed = _DLManagedTensorVersioned.from_address(address)
    assert (managed.major, managed.minor) == (1, 0)
    assert managed.flags == 0  # writable
    tensor = managed.dl_tensor
    assert tensor.data == buffer.ptr and tensor.byte_offset == 0
    assert (tensor.device_type, tensor.device_id) == buffer.__dlpack_device__()
    assert tensor.ndim == 1 and tensor.shape[0] == 48 and not tensor.strides
    assert (tensor.code, tensor.bits, tensor.lanes) == (1, 8, 1)  # kDLUInt, 8 bits
    api.PyCapsule_SetName(capsule, b"used_dltensor_versioned")  # the consumer owns it now
    del capsule
    with pytest.raises(ValueError, match="exported"):
        buffer.close()
    managed.deleter(address)  # the consumer is done with it
    buffer.close()


def test_unconsumed_capsule_releases_the_export():
    buffer = polyhal.Buffer(16)
    capsule = buffer.__dlpack__()
    assert _capsule_api().PyCapsule_IsValid(capsule, b"dltensor")
    del capsule
    buffer.close()


def test_dlpack_arguments_and_devices(monkeypatch):
    buffer = polyhal.Buffer(16)
    with pytest.raises(BufferError, match="copy"):
        buffer.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="device"):
        buffer.__dlpack__(dl_device=(99, 0))
    props = polyhal.get_device_properties()
    if polyhal.Capability.HOST_ACCESSIBLE in props.capabilities:
        assert buffer.__dlpack_device__() == (1, 0)
    else:
        # Device memory the host cannot read is exported under the backend's device type.
        assert buffer.__dlpack_device__()[0] != 1
        reported = []
        monkeypatch.setattr(sys, "unraisablehook", reported.append)
        with pytest.raises(Exception) as rejected:
            np.from_dlpack(buffer)  # numpy reads only host memory
        if reported:
            # numpy rejected the capsule after taking it: its error reaches sys.unraisablehook
            # and numpy raises SystemError (a ctypes capsule destructor cannot do better).
            assert rejected.type is SystemError
            assert issubclass(reported[0].exc_type, (BufferError, RuntimeError))
    buffer.close()  # the rejected export was released
