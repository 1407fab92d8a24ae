"""Exceptions for failed polyhal calls: one subclass of HalError per halError code."""


class HalError(RuntimeError):
    """A polyhal call failed.

    Attributes: ``code`` (the halError value), ``name`` (``"HAL_ERROR_INVALID_VALUE"``),
    ``detail`` (halGetLastErrorMessage() of the failed call) and ``function`` (the C function).
    """

    code = None

    def __init__(self, code, name, detail, function):
        self.code = code
        self.name = name
        self.detail = detail
        self.function = function
        super().__init__(f"{function}: {name}: {detail}")


class InvalidValueError(HalError):
    code = 1


class InvalidHandleError(HalError):
    code = 2


class OutOfMemoryError(HalError):
    code = 3


class NotReadyError(HalError):
    code = 4


class NotSupportedError(HalError):
    code = 5


class NoDeviceError(HalError):
    code = 6


class BackendNotFoundError(HalError):
    code = 7


class BackendIncompatibleError(HalError):
    code = 8


class LaunchFailedError(HalError):
    code = 9


class BackendError(HalError):
    code = 10


class InvalidDeviceError(HalError):
    code = 11


class InvalidImageError(HalError):
    code = 12


class NotFoundError(HalError):
    code = 13


class NotPermittedError(HalError):
    """A call made where polyhal forbids it: inside a host function (Stream.launch_host_func),
    every call that could reach the device."""

    code = 14


class StreamCaptureUnsupportedError(HalError):
    """A call that cannot be made while a stream is being captured (polyhal.graph); the capture
    is invalidated."""

    code = 15


class StreamCaptureInvalidatedError(HalError):
    code = 16


class StreamCaptureUnjoinedError(HalError):
    code = 17


class StreamCaptureIsolationError(HalError):
    code = 18


class StreamCaptureWrongThreadError(HalError):
    code = 19


class StreamCaptureUnmatchedError(HalError):
    code = 20


class UnknownError(HalError):
    code = 999


_BY_CODE = {cls.code: cls for cls in HalError.__subclasses__()}


def error_for(code, name, detail, function):
    """The exception for `code`: its subclass, or HalError for a code this module predates."""
    return _BY_CODE.get(code, HalError)(code, name, detail, function)
