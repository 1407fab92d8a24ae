"""Each framework's argument order and priority scale, for code ported as it is written.

polyhal.Stream and polyhal.Event take keyword arguments only, because the frameworks disagree on
what a positional one means. These take them as each framework does and return polyhal objects:

    torch_stream(device=None, priority=0)      torch.Stream, torch.cuda.Stream
    torch_event(device=None, enable_timing=False, blocking=False, interprocess=False)
    paddle_stream(device=None, priority=2)     paddle.device.Stream: 1 is high, 2 normal
    paddle_event(device=None, enable_timing=False, blocking=False)
    mindspore_stream(priority=0)               mindspore.hal.Stream
    mindspore_event(enable_timing=False, blocking=False)
"""
from ._device import priority_range
from ._event import Event
from ._stream import Stream

# paddle.device.Stream's scale: 1 (high) and 2 (normal), the only two it accepts.
_PADDLE_HIGH, _PADDLE_NORMAL = 1, 2


def torch_stream(device=None, priority=0):
    return Stream(device=device, priority=priority)


def torch_event(device=None, enable_timing=False, blocking=False, interprocess=False):
    return Event(device=device, enable_timing=enable_timing, blocking=blocking,
                 interprocess=interprocess)


def paddle_stream(device=None, priority=_PADDLE_NORMAL):
    """Paddle's priority 1 is the device's highest (priority_range()'s greatest), 2 its
    normal one (0)."""
    if isinstance(priority, bool) or priority not in (_PADDLE_HIGH, _PADDLE_NORMAL):
        raise ValueError(f"paddle's stream priority is 1 (high) or 2 (normal), not {priority!r}")
    if priority == _PADDLE_HIGH:
        return Stream(device=device, priority=priority_range(device)[1])
    return Stream(device=device, priority=0)


def paddle_event(device=None, enable_timing=False, blocking=False):
    return Event(device=device, enable_timing=enable_timing, blocking=blocking)


def mindspore_stream(priority=0):
    return Stream(priority=priority)


def mindspore_event(enable_timing=False, blocking=False):
    return Event(enable_timing=enable_timing, blocking=blocking)
