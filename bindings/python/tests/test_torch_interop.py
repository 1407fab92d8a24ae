"""PyTorch as a client: DLPack both ways (torch.from_dlpack of a Buffer, polyhal.from_dlpack of a
torch tensor), in place, with the stream protocol ordering the exchange; and torch.Stream and
torch.Event next to polyhal's. Runs with any torch; the torch.Stream/torch.Event comparison needs
torch 2.x (tools/install-deps.sh installs 2.15 for these tests)."""
import gc
import threading

import numpy as np
import pytest

import polyhal
from helpers import Gate, require, to_device

torch = pytest.importorskip("torch")


def _open_later(gate, seconds=0.3):
    opener = threading.Timer(seconds, gate.open)
    opener.start()
    return opener


def test_torch_reads_and_writes_buffer_memory_in_place():
    require(polyhal.Capability.HOST_ACCESSIBLE)
    buffer = to_device(np.arange(16, dtype=np.float32))
    tensor = torch.from_dlpack(buffer)
    assert tensor.dtype == torch.uint8 and tuple(tensor.shape) == (64,)
    assert tensor.data_ptr() == buffer.ptr  # no copy
    floats = tensor.view(torch.float32)
    assert floats.tolist() == list(range(16))

    floats.mul_(2)  # torch writes, polyhal reads it
    np.testing.assert_array_equal(buffer.to_numpy(np.float32), 2 * np.arange(16))
    buffer.copy_from(np.full(16, 7, dtype=np.float32))  # polyhal writes, torch sees it
    assert floats.tolist() == [7.0] * 16
    del tensor, floats
    gc.collect()
    buffer.close()  # the export ended with the tensor


def test_torch_from_dlpack_waits_for_the_current_streams_work():
    require(polyhal.Capability.HOST_ACCESSIBLE)
    source = to_device(np.full(16, 5, dtype=np.float32))
    buffer = to_device(np.zeros(16, dtype=np.float32))
    with Gate() as gate:
        gate.hold(polyhal.current_stream())
        buffer.copy_from(source)  # enqueued behind the gate
        opener = _open_later(gate)
        tensor = torch.from_dlpack(buffer)  # __dlpack__(stream=None): waits for the stream
        assert tensor.view(torch.float32).tolist() == [5.0] * 16
        opener.join()


def test_polyhal_computes_on_torch_tensors_in_place(matmul):
    if polyhal.backend() != "cpu":  # torch's tensors here are in host memory
        pytest.skip(f"kernels of the {polyhal.backend()} backend take only memory polyhal "
                    f"allocated (docs/python.md, DLPack)")
    a, b = torch.randn(24, 40), torch.randn(40, 16)
    product = torch.zeros(24, 16)
    a_in, b_in = polyhal.from_dlpack(a), polyhal.from_dlpack(b)
    out = polyhal.from_dlpack(product)
    assert out.borrowed and out.ptr == product.data_ptr() and out.nbytes == product.numel() * 4
    matmul(a_in, b_in, out, 24, 40, 16)
    out.close()  # waits for the launch, then hands the memory back to torch
    torch.testing.assert_close(product, a @ b, rtol=1e-4, atol=1e-4)
    a_in.close()
    b_in.close()


def test_closing_a_borrowed_buffer_waits_for_the_work_that_uses_it():
    require(polyhal.Capability.HOST_ACCESSIBLE)
    tensor = torch.zeros(16, dtype=torch.float32)
    borrowed = polyhal.from_dlpack(tensor)
    source = to_device(np.full(16, 3, dtype=np.float32))
    with Gate() as gate:
        gate.hold(polyhal.current_stream())
        borrowed.copy_from(source)  # enqueued behind the gate
        opener = _open_later(gate)
        borrowed.close()
        assert tensor.tolist() == [3.0] * 16
        opener.join()


def test_a_borrowed_tensor_outlives_torchs_last_reference():
    require(polyhal.Capability.HOST_ACCESSIBLE)
    tensor = torch.arange(32, dtype=torch.int32)
    borrowed = polyhal.from_dlpack(tensor)
    del tensor
    gc.collect()
    # Had the storage been freed, torch's allocator could hand its memory to these.
    others = [torch.full((32,), -1, dtype=torch.int32) for _ in range(8)]
    assert all(other.data_ptr() != borrowed.ptr for other in others)
    np.testing.assert_array_equal(borrowed.to_numpy(np.int32), np.arange(32))
    borrowed.close()


def test_polyhal_round_trips_its_own_buffers_on_every_backend():
    buffer = to_device(np.arange(8, dtype=np.float32))
    again = polyhal.from_dlpack(buffer)
    assert again.ptr == buffer.ptr and again.nbytes == buffer.nbytes
    with pytest.raises(ValueError, match="exported"):
        buffer.close()  # the borrowed buffer holds an export
    np.testing.assert_array_equal(again.to_numpy(np.float32), np.arange(8))
    again.close()
    buffer.close()


class _Producer:
    """A DLPack producer reporting `device` and recording the arguments it was asked with."""

    def __init__(self, array, device):
        self._array = array
        self._device = device
        self.asked = None

    def __dlpack_device__(self):
        return self._device

    def __dlpack__(self, **kwargs):
        self.asked = kwargs
        return self._array.__dlpack__()


def test_the_consumers_stream_is_passed_to_the_producer():
    stream = polyhal.Stream()
    device = polyhal.Buffer(1).__dlpack_device__()
    producer = _Producer(np.arange(4, dtype=np.float32), device)
    borrowed = polyhal.from_dlpack(producer, stream=stream)
    if device[0] == 1:  # host memory: the array API passes no stream
        assert "stream" not in producer.asked
    else:
        native = stream.native_handle
        assert producer.asked["stream"] == (1 if native == 0 and device[0] == 2 else native)
    assert producer.asked["max_version"] == (1, 0)
    assert borrowed.stream == stream
    borrowed.close()


def test_tensors_polyhal_cannot_take_are_refused_by_name():
    with pytest.raises(BufferError, match="DLPack device"):
        polyhal.from_dlpack(_Producer(np.zeros(4), (2, 7)))
    with pytest.raises(AttributeError):
        polyhal.from_dlpack(b"bytes")
    device = polyhal.Buffer(1).__dlpack_device__()
    transposed = torch.arange(16.0).reshape(4, 4).t()
    with pytest.raises(BufferError, match="not contiguous"):
        polyhal.from_dlpack(_Producer(transposed, device))
    borrowed = polyhal.from_dlpack(_Producer(torch.zeros(4), device))
    with pytest.raises(ValueError, match="cannot be shared"):
        borrowed.ipc_handle()
    borrowed.close()


def _public(cls):
    return {name for name in dir(cls) if not name.startswith("_")}


@pytest.mark.skipif(not hasattr(torch, "Event"),
                    reason="torch before 2.3 has no generic torch.Stream and torch.Event")
def test_every_member_of_torch_stream_and_event_has_polyhals_counterpart():
    assert _public(torch.Stream) - _public(polyhal.Stream) == set()
    assert _public(torch.Event) - _public(polyhal.Event) == set()
    default, other = polyhal.default_stream(), polyhal.Stream()
    assert default.stream_id == 0 and other.stream_id not in (0, default.stream_id)
    assert other.device_index == other.device == polyhal.get_device()
    assert other.device_type == polyhal.backend()
    assert not other.is_capturing()
    event = polyhal.Event()
    assert event.event_id != polyhal.Event().event_id


def test_is_capturing_is_true_inside_a_capture():
    stream = polyhal.Stream()
    with polyhal.graph(polyhal.Graph(), stream=stream):
        assert stream.is_capturing()
    assert not stream.is_capturing()
