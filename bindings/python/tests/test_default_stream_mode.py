"""CUDA's legacy default stream as an option: set_default_stream_mode("legacy") makes the default
stream wait for the blocking streams and them for it; Stream(non_blocking=True) stays out."""
import pytest

import polyhal
from helpers import Gate


def warm(stream):
    """Runs a host function on `stream`, so that later ones run at once where nothing holds it
    and a missing implicit wait shows."""
    stream.launch_host_func(lambda: None)
    stream.synchronize()


def after_gate(gate, stream):
    """Enqueues on `stream` a host function that notes whether `gate` was open when it ran."""
    seen = []
    stream.launch_host_func(lambda: seen.append(gate.is_open()))
    return seen


@pytest.fixture
def legacy():
    previous = polyhal.default_stream_mode()
    polyhal.set_default_stream_mode("legacy")
    yield
    polyhal.set_default_stream_mode(previous)


def test_mode_is_set_and_read_back(legacy):
    assert polyhal.default_stream_mode() == "legacy"
    with pytest.raises(ValueError):
        polyhal.set_default_stream_mode("per-thread")


def test_legacy_default_stream_waits_for_a_blocking_stream(legacy):
    stream = polyhal.Stream()
    default = polyhal.default_stream()
    warm(default)
    with Gate() as gate:
        gate.hold(stream)
        seen = after_gate(gate, default)
        assert not default.query()
        gate.open()
        default.synchronize()
        assert seen == [True]


def test_blocking_stream_waits_for_the_legacy_default_stream(legacy):
    stream = polyhal.Stream()
    warm(stream)
    with Gate() as gate:
        gate.hold(polyhal.default_stream())
        seen = after_gate(gate, stream)
        assert not stream.query()
        gate.open()
        stream.synchronize()
        assert seen == [True]


def test_non_blocking_stream_is_not_held_by_the_legacy_default_stream(legacy):
    stream = polyhal.Stream(non_blocking=True)
    assert stream.non_blocking and not polyhal.Stream().non_blocking
    with Gate() as gate:
        gate.hold(polyhal.default_stream())
        # A copy, not a host function: CUDA may run the host functions of every stream on one
        # thread, where the gate's would hold this one whatever the stream's flags.
        buffer = polyhal.Buffer(256, stream=stream)
        buffer.copy_from(bytes(range(256)), stream=stream)  # returns once the stream has run it
        assert not polyhal.default_stream().query()
