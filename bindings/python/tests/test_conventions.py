"""The frameworks' conventions where they disagree: keyword-only Stream and Event, devices named
as torch and paddle name them, the device context manager, priority ranges, Paddle's priority
scale, a Stream used as a context manager, and an Event that takes its device from its first
record (torch.Event)."""
import pytest

import polyhal
from helpers import run_python


class FakeTorchDevice:
    """What polyhal reads of a torch.device: its type and index."""

    def __init__(self, type_, index):
        self.type = type_
        self.index = index


def test_stream_and_event_refuse_positional_arguments_by_naming_the_ambiguity():
    with pytest.raises(TypeError, match="keyword arguments only"):
        polyhal.Stream(0)
    with pytest.raises(TypeError, match="keyword arguments only"):
        polyhal.Event(True)
    stream = polyhal.Stream(device=polyhal.get_device(), priority=0)
    assert stream.device == polyhal.get_device()


def test_devices_named_by_string_or_torch_device_mean_the_ordinal():
    name = polyhal.backend()
    current = polyhal.get_device()
    assert polyhal.default_stream(f"{name}:{current}") == polyhal.default_stream(current)
    assert polyhal.default_stream(str(current)) == polyhal.default_stream(current)
    assert polyhal.Stream(device=FakeTorchDevice(name, current)).device == current
    # A torch.device without an index is the current device.
    assert polyhal.Stream(device=FakeTorchDevice(name, None)).device == current
    other = "opencl" if name != "opencl" else "cpu"
    with pytest.raises(ValueError, match="names backend"):
        polyhal.set_device(f"{other}:0")
    with pytest.raises(ValueError, match="names backend"):
        polyhal.Stream(device=FakeTorchDevice(other, 0))
    with pytest.raises(ValueError):
        polyhal.set_device("gpu:first")


def test_device_context_manager_restores_the_previous_device_and_stream_selects_itself():
    before = polyhal.get_device()
    with polyhal.device(before) as selected:
        assert selected.index == before and polyhal.get_device() == before
    stream = polyhal.Stream()
    with stream as entered:
        assert entered is stream
        assert polyhal.current_stream() == stream
        with stream:  # nested entries unwind one at a time
            assert polyhal.current_stream() == stream
        assert polyhal.current_stream() == stream
    assert polyhal.current_stream() == polyhal.default_stream()
    assert polyhal.get_device() == before


def test_priority_range_is_the_clamping_range_and_paddles_scale_maps_onto_it():
    least, greatest = polyhal.priority_range()
    assert greatest <= least
    assert polyhal.Stream(priority=-(1 << 30)).priority == greatest
    assert polyhal.Stream(priority=1 << 30).priority == least
    assert polyhal.compat.paddle_stream(priority=1).priority == greatest
    assert polyhal.compat.paddle_stream().priority == 0
    for wrong in (0, 3, True):
        with pytest.raises(ValueError, match="1 \\(high\\) or 2 \\(normal\\)"):
            polyhal.compat.paddle_stream(priority=wrong)
    assert polyhal.compat.torch_stream(polyhal.get_device()).device == polyhal.get_device()
    assert polyhal.compat.mindspore_stream(least).priority == least
    assert polyhal.compat.mindspore_event(True).enable_timing


def test_two_devices_by_every_name_and_events_that_follow_their_first_record():
    if polyhal.backend() != "cpu":
        pytest.skip("two devices are made with POLYHAL_CPU_DEVICES, a CPU-backend setting")
    result = run_python("""
        import polyhal
        with polyhal.device("cpu:1"):
            assert polyhal.get_device() == 1
            with polyhal.device(0):
                assert polyhal.get_device() == 0
            assert polyhal.get_device() == 1
        assert polyhal.get_device() == 0
        on_one = polyhal.compat.torch_stream(1)
        assert on_one.device == 1
        with on_one:
            assert polyhal.get_device() == 1
        assert polyhal.get_device() == 0
        moving = polyhal.Event()        # made on device 0, first recorded on device 1
        moving.record(on_one)
        assert moving.device == 1
        moving.synchronize()
        try:
            moving.record(polyhal.default_stream(0))  # recorded once: it stays on device 1
        except polyhal.InvalidValueError:
            pass
        else:
            raise AssertionError("a recorded event moved to another device")
        pinned = polyhal.Event(device=0)  # a device given: other devices' streams refused
        try:
            pinned.record(on_one)
        except polyhal.InvalidValueError:
            print("ok")
        """, POLYHAL_BACKEND="cpu", POLYHAL_CPU_DEVICES="2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
