"""polyhal.Module and its kernels: load an image, look a kernel up, launch it on a stream."""
import ctypes
import os

import numpy

from ._capi import (HAL_KERNEL_ARG_NO_ACCESS, HAL_KERNEL_ARG_READ_ONLY, HAL_KERNEL_ARG_READ_WRITE,
                    HAL_KERNEL_ARG_WRITE_ONLY, SIZE_MAX, Dim3, Handle, KernelArg, KernelArgUse,
                    hal)
from ._current import resolve
from ._device import get_device
from ._memory import Buffer
from ._resource import Resource


class Module(Resource):
    """Kernels loaded on the current device from a file path or an in-memory image: a host
    shared object for the CPU backend (<polyhal/cpu_kernel.h>), OpenCL C or SPIR-V for OpenCL,
    PTX/cubin/fatbin for CUDA, SPIR-V for Level Zero."""

    _kind = "module"

    def __init__(self, path_or_bytes):
        handle = Handle()
        if isinstance(path_or_bytes, (str, os.PathLike)):
            hal.halModuleLoadFile(ctypes.byref(handle), os.fsencode(path_or_bytes))
        elif isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            image = bytes(path_or_bytes)
            hal.halModuleLoadData(ctypes.byref(handle), image, len(image))
        else:
            raise TypeError(f"Module() needs a path or the image's bytes, not "
                            f"{type(path_or_bytes).__name__}")
        self._handle = handle.value
        self._device = get_device()
        self._closed = False

    @property
    def device(self):
        return self._device

    def function(self, name):
        """The kernel `name` (NotFoundError if the module has none)."""
        if not isinstance(name, str):
            raise TypeError(f"a kernel name is a str, not {type(name).__name__}")
        self._require_open()
        handle = Handle()
        hal.halModuleGetFunction(ctypes.byref(handle), self._handle, name.encode())
        return Function(self, handle.value, name)

    def _release(self):
        hal.halModuleUnload(self._handle)  # waits for nothing: launched kernels still finish


class Function:
    """A kernel of a Module; valid while its module is open.

    ``function(grid, block, *args, stream=None, shared_mem=0)`` enqueues a launch of `grid`
    blocks of `block` threads (each an int or a tuple of up to three ints) on `stream` (default:
    the current stream). Each argument is a Buffer, passed as its device address, or a numpy
    scalar (numpy.uint32(n), numpy.float32(x)), passed by value with its dtype's size.
    `shared_mem` is the launch's dynamic shared memory in bytes. `access`, one entry per
    argument, says how the kernel uses the memory each points to, for checked mode's race
    detector: "rw" (the default for every argument), "r", "w" or None (not accessed).
    `extents`, one entry per argument, says how many bytes from the pointer the kernel may
    touch (None or 0: to the end of its allocation), so that kernels on different streams that
    each work on their own slice of one buffer are not reported as racing.
    """

    def __init__(self, module, handle, name):
        self._module = module  # keeps the module loaded while the function is reachable
        self._handle = handle
        self._name = name

    @property
    def name(self):
        return self._name

    def __call__(self, grid, block, *args, stream=None, shared_mem=0, access=None,
                 extents=None):
        stream = resolve(stream)
        self._module._require_open()
        grid, block = _dim3("grid", grid), _dim3("block", block)
        if not isinstance(shared_mem, int) or not 0 <= shared_mem <= SIZE_MAX:
            raise ValueError(f"shared_mem must be an int in 0..{SIZE_MAX}, not {shared_mem!r}")
        storage = [_argument_bytes(index, arg) for index, arg in enumerate(args)]
        kernel_args = (KernelArg * max(len(args), 1))(
            *(KernelArg(ctypes.addressof(value), ctypes.sizeof(value)) for value in storage))
        modes = _access_modes(access, len(args))
        uses = _argument_uses(modes, extents, len(args))
        with stream._selected():
            if uses is not None:
                hal.halLaunchKernelWithUses(self._handle, grid, block, shared_mem, kernel_args,
                                            uses, len(args), stream._handle)
            elif modes is None:
                hal.halLaunchKernel(self._handle, grid, block, shared_mem, kernel_args,
                                    len(args), stream._handle)
            else:
                hal.halLaunchKernelWithAccess(self._handle, grid, block, shared_mem, kernel_args,
                                              modes, len(args), stream._handle)

    def __repr__(self):
        return f"<polyhal.Function {self._name!r}>"


_ACCESS_MODES = {"rw": HAL_KERNEL_ARG_READ_WRITE, "r": HAL_KERNEL_ARG_READ_ONLY,
                 "w": HAL_KERNEL_ARG_WRITE_ONLY, None: HAL_KERNEL_ARG_NO_ACCESS}


def _access_modes(access, count):
    """The halKernelArgAccess array for `access` (None: none passed)."""
    if access is None:
        return None
    access = list(access)
    if len(access) != count:
        raise ValueError(f"access has {len(access)} entries for {count} kernel arguments")
    for index, mode in enumerate(access):
        if mode not in _ACCESS_MODES:
            raise ValueError(f"access[{index}] is {mode!r}: use 'rw', 'r', 'w' or None")
    return (ctypes.c_int * max(count, 1))(*(_ACCESS_MODES[mode] for mode in access))


def _argument_uses(modes, extents, count):
    """The halKernelArgUse array for `extents` with `modes` (None: no extents passed)."""
    if extents is None:
        return None
    extents = list(extents)
    if len(extents) != count:
        raise ValueError(f"extents has {len(extents)} entries for {count} kernel arguments")
    for index, extent in enumerate(extents):
        if extent is not None and (not isinstance(extent, int) or not 0 <= extent <= SIZE_MAX):
            raise ValueError(f"extents[{index}] is {extent!r}: use a byte count or None")
    return (KernelArgUse * max(count, 1))(
        *(KernelArgUse(modes[index] if modes is not None else HAL_KERNEL_ARG_READ_WRITE,
                       extent or 0) for index, extent in enumerate(extents)))


def _argument_bytes(index, arg):
    """The bytes a kernel receives for `arg`, in ctypes storage that outlives the launch call."""
    if isinstance(arg, Buffer):
        return ctypes.c_void_p(arg.ptr)
    if isinstance(arg, numpy.generic) and arg.dtype.kind in "biufc":
        data = arg.tobytes()
        return ctypes.create_string_buffer(data, len(data))
    raise TypeError(f"kernel argument {index} is a {type(arg).__name__}: pass a polyhal.Buffer or "
                    f"a numpy scalar such as numpy.uint32(n) or numpy.float32(x), whose dtype "
                    f"gives the size the kernel reads")


def _dim3(what, value):
    dims = (value,) if isinstance(value, int) else value
    if not isinstance(dims, (tuple, list)) or not 1 <= len(dims) <= 3 or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in dims):
        raise TypeError(f"{what} must be an int or a tuple of 1 to 3 ints, not {value!r}")
    if any(d <= 0 or d >= 1 << 32 for d in dims):
        raise ValueError(f"{what} dimensions must be in 1..2**32-1, not {value!r}")
    return Dim3(*dims, *(1,) * (3 - len(dims)))
