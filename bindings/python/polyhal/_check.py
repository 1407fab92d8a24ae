"""Checked mode (docs/check.md): which checks POLYHAL_CHECK switched on, and how many findings
they reported, as an application or a test reads them."""
import ctypes

from ._capi import hal

_CHECKS = {1: "races", 2: "leaks", 4: "api"}


def check_enabled():
    """The names of the checks that are on ("races", "leaks", "api"); empty when off."""
    checks = ctypes.c_uint32()
    hal.halCheckGetEnabled(ctypes.byref(checks))
    return frozenset(name for flag, name in _CHECKS.items() if checks.value & flag)


def check_findings():
    """How many findings checked mode has reported in this process."""
    count = ctypes.c_uint64()
    hal.halCheckGetFindingCount(ctypes.byref(count))
    return count.value
