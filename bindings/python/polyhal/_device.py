"""Devices: how many, which one is current for the calling thread, what each can do."""
import ctypes
import dataclasses
import enum
import operator

from ._capi import INT_MAX, hal
from ._capi import DeviceProperties as _DeviceProperties


class Capability(enum.IntFlag):
    """halDeviceCapability bits."""

    TIMING_EVENTS = 1 << 0
    HOST_FUNCTIONS = 1 << 1
    KERNELS = 1 << 2
    STREAM_PRIORITIES = 1 << 3
    HOST_ACCESSIBLE = 1 << 4
    NATIVE_HANDLES = 1 << 5
    PEER_COPY = 1 << 6
    CONCURRENT_HOST_FUNCTIONS = 1 << 7
    IPC_MEMORY = 1 << 8
    IPC_EVENTS = 1 << 9
    HOST_REGISTER = 1 << 10
    MANAGED_MEMORY = 1 << 11


@dataclasses.dataclass(frozen=True)
class DeviceProperties:
    """halDeviceProperties of one device."""

    name: str
    backend: str
    ordinal: int
    backend_ordinal: int
    total_memory: int
    compute_units: int
    max_threads_per_block: int
    max_shared_memory_per_block: int
    capabilities: Capability
    max_kernel_argument_bytes: int
    dlpack_device_type: int  # DLPack's DLDeviceType of the device's memory, 0 if none
    module_image_kinds: tuple  # file extensions of the module images it loads, preferred first


# Device names that mean polyhal's backend of that name; PyTorch on ROCm calls HIP devices "cuda".
_ALIASES = {"cuda": ("cuda", "hip")}


def device_index(device):
    """`device` as an int ordinal. Accepted: an int; a string "N" or "<backend>:N" (as
    torch.device and paddle.device take them: "cuda:1", "cpu:0"); an object with `type` and
    `index` attributes, such as a torch.device, whose index None means the current device. A
    name other than the current device's backend is a ValueError, as is an ordinal beyond a C
    int; any other type a TypeError (polyhal itself checks that the device exists)."""
    if isinstance(device, bool):
        raise TypeError("a device is an int ordinal, not a bool")
    if isinstance(device, str):
        name, _, ordinal = device.rpartition(":")
        if not ordinal.strip().isdigit():
            raise ValueError(f"device {device!r} is not \"N\" or \"<backend>:N\"")
        return _named_index(device, name, int(ordinal))
    if hasattr(device, "type") and hasattr(device, "index"):  # torch.device
        index = get_device() if device.index is None else device.index
        return _named_index(device, str(device.type), index)
    try:
        index = operator.index(device)
    except TypeError:
        raise TypeError(f"a device is an int ordinal, a \"<backend>:N\" string or a "
                        f"torch.device, not {type(device).__name__}") from None
    if not -INT_MAX - 1 <= index <= INT_MAX:
        raise ValueError(f"device ordinal {index} is out of range")
    return index


def _named_index(device, name, index):
    """`index`, once `name` (empty: any) is checked against the current backend."""
    if name and backend() not in _ALIASES.get(name, (name,)):
        raise ValueError(f"device {device!r} names backend {name!r}, but polyhal runs the "
                         f"{backend()!r} backend (POLYHAL_BACKEND)")
    return device_index(index)


def device_count():
    """Number of devices over all loaded backends."""
    count = ctypes.c_int()
    hal.halGetDeviceCount(ctypes.byref(count))
    return count.value


def set_device(device):
    """Makes `device` the calling thread's current device."""
    hal.halSetDevice(device_index(device))


def get_device():
    """The calling thread's current device (0 until set_device)."""
    device = ctypes.c_int()
    hal.halGetDevice(ctypes.byref(device))
    return device.value


def backend():
    """Name of the current device's backend: "cpu", "opencl", "cuda", ..."""
    name = ctypes.c_char_p()
    hal.halGetBackendName(ctypes.byref(name))
    return name.value.decode()


def get_device_properties(device=None):
    """DeviceProperties of `device` (default: the current device)."""
    props = _DeviceProperties(size=ctypes.sizeof(_DeviceProperties))
    hal.halGetDeviceProperties(get_device() if device is None else device_index(device),
                               ctypes.byref(props))
    return DeviceProperties(
        name=props.name.decode(errors="replace"),
        backend=props.backend.decode(),
        ordinal=props.ordinal,
        backend_ordinal=props.backendOrdinal,
        total_memory=props.totalMemory,
        compute_units=props.computeUnits,
        max_threads_per_block=props.maxThreadsPerBlock,
        max_shared_memory_per_block=props.maxSharedMemoryPerBlock,
        capabilities=Capability(props.capabilities),
        max_kernel_argument_bytes=props.maxKernelArgumentBytes,
        dlpack_device_type=props.dlpackDeviceType,
        module_image_kinds=tuple(kind for kind in props.moduleImageKinds.decode().split(",")
                                 if kind),
    )


def synchronize(device=None):
    """Blocks until every stream of `device` (default: the current device) has finished."""
    with on_device(device):
        hal.halSynchronizeDevice()


def mem_get_info(device=None):
    """(free, total) bytes of `device`'s memory (default: the current device), as
    torch.cuda.mem_get_info: as the backend reports them, else the total less what polyhal's
    pool holds."""
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    with on_device(device):
        hal.halGetMemInfo(ctypes.byref(free), ctypes.byref(total))
    return free.value, total.value


def can_device_access_peer(device, peer_device):
    """Can kernels of `device` be given access to memory of `peer_device`?"""
    can = ctypes.c_int()
    hal.halDeviceCanAccessPeer(ctypes.byref(can), device_index(device), device_index(peer_device))
    return bool(can.value)


def enable_peer_access(peer_device):
    """Lets kernels of the current device access memory of `peer_device`; enabling twice is
    allowed. NotSupportedError when can_device_access_peer says no."""
    hal.halDeviceEnablePeerAccess(device_index(peer_device), 0)


def disable_peer_access(peer_device):
    """Withdraws enable_peer_access(peer_device) from the current device."""
    hal.halDeviceDisablePeerAccess(device_index(peer_device))


class device:  # noqa: N801 (the name of torch.cuda.device and paddle's device guard)
    """``with polyhal.device(n):`` makes device `n` (anything device_index takes; None changes
    nothing) the calling thread's current device inside the block, and restores the previous
    one on exit, as torch.cuda.device does."""

    def __init__(self, device):
        self._index = None if device is None else device_index(device)
        self._previous = []

    def __enter__(self):
        self._previous.append(get_device())
        if self._index is not None:
            set_device(self._index)
        return self

    def __exit__(self, *exc_info):
        set_device(self._previous.pop())
        return False

    @property
    def index(self):
        return self._index


_priority_ranges = {}  # device -> (least, greatest): a property of the device, asked once


def priority_range(device=None):
    """(least, greatest) stream priorities of `device` (default: the current device), as
    cudaDeviceGetStreamPriorityRange: lower numbers are higher priorities, so greatest <= least;
    (0, 0) where priorities do nothing."""
    device = get_device() if device is None else device_index(device)
    known = _priority_ranges.get(device)
    if known is None:
        least, greatest = ctypes.c_int(), ctypes.c_int()
        with on_device(device):
            hal.halGetStreamPriorityRange(ctypes.byref(least), ctypes.byref(greatest))
        known = _priority_ranges[device] = (least.value, greatest.value)
    return known


class on_device:  # noqa: N801 (used as a function: `with on_device(d):`)
    """Makes `device` current for the calling thread inside the block; None changes nothing.
    A class rather than a generator: streams and events enter it on every call."""

    __slots__ = ("_device", "_previous")

    def __init__(self, device):
        self._device = device
        self._previous = None

    def __enter__(self):
        if self._device is not None:
            device = device_index(self._device)
            previous = get_device()
            if device != previous:
                hal.halSetDevice(device)
                self._previous = previous

    def __exit__(self, *exc_info):
        if self._previous is not None:
            hal.halSetDevice(self._previous)
            self._previous = None
        return False
