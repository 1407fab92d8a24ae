"""Buffers from the stream-aware pool: copies, statistics, and the cross-stream lifetime
scenario of MindSpore's stream-management guide."""
import gc

import numpy as np
import pytest

import polyhal
from helpers import Gate, to_device

NBYTES = 96 * 1024


def pattern(value, nbytes=NBYTES):
    return np.full(nbytes, value, dtype=np.uint8)


def test_copies_between_host_and_buffers():
    source = np.arange(1000, dtype=np.int32)
    buffer = polyhal.Buffer(source.nbytes)
    buffer.copy_from(source)
    np.testing.assert_array_equal(buffer.to_numpy(np.int32), source)
    np.testing.assert_array_equal(buffer.to_numpy(np.int32, (10, 100)), source.reshape(10, 100))

    other = polyhal.Buffer(source.nbytes)
    other.copy_from(buffer)  # device to device, in the current stream's order
    np.testing.assert_array_equal(other.to_numpy(np.int32), source)

    other.copy_from(b"\x01\x02\x03\x04")  # bytes-like sources fill the leading bytes
    assert other.to_numpy(np.uint8, (4,)).tolist() == [1, 2, 3, 4]
    strided = source.reshape(10, 100)[:, ::2]  # copied as its contiguous equivalent
    other.copy_from(strided)
    np.testing.assert_array_equal(other.to_numpy(np.int32, strided.shape), strided)

    with pytest.raises(ValueError, match="do not fit"):
        polyhal.Buffer(8).copy_from(source)
    with pytest.raises(ValueError, match="do not fit"):
        buffer.to_numpy(np.int32, (1001,))
    with pytest.raises(TypeError, match="bytes-like"):
        buffer.copy_from([1, 2, 3])


def test_pitched_copies_of_2d_and_3d_arrays():
    image = np.arange(64 * 50, dtype=np.uint16).reshape(64, 50)
    window = image[3:40, 5:45]  # rows 100 bytes apart, 80 bytes wide: copied without repacking
    pitch = 128
    buffer = polyhal.Buffer(pitch * window.shape[0])
    buffer.copy_from(np.full(buffer.nbytes, 0xEE, dtype=np.uint8))
    buffer.copy_from_pitched(window, pitch=pitch)
    np.testing.assert_array_equal(buffer.to_numpy_pitched(window.shape, pitch, np.uint16), window)
    raw = buffer.to_numpy(np.uint8).reshape(window.shape[0], pitch)
    assert (raw[:, window.nbytes // window.shape[0]:] == 0xEE).all()  # the padding is untouched

    volume = np.arange(5 * 7 * 20, dtype=np.float32).reshape(5, 7, 20)
    pitch, slice_pitch = 96, 96 * 8
    box = polyhal.Buffer(slice_pitch * 5 + 16)
    box.copy_from_pitched(volume, pitch=pitch, slice_pitch=slice_pitch, offset=16)
    back = box.to_numpy_pitched(volume.shape, pitch, np.float32, slice_pitch, offset=16)
    np.testing.assert_array_equal(back, volume)

    with pytest.raises(ValueError, match="slice_pitch"):
        box.copy_from_pitched(volume, pitch=pitch)
    with pytest.raises(polyhal.InvalidValueError, match="width"):
        box.copy_from_pitched(volume, pitch=40, slice_pitch=slice_pitch)
    with pytest.raises(polyhal.InvalidValueError, match="past the end"):
        buffer.copy_from_pitched(window, pitch=pitch + 64)
    with pytest.raises(ValueError, match="offset"):
        buffer.copy_from_pitched(window, pitch=pitch, offset=buffer.nbytes)
    with pytest.raises(ValueError, match="2-D or 3-D"):
        buffer.copy_from_pitched(np.zeros(4), pitch=pitch)


def test_buffer_on_a_stream_is_freed_in_its_order():
    s = polyhal.Stream()
    before = polyhal.memory_stats()
    buffer = polyhal.Buffer(NBYTES, stream=s)
    assert buffer.stream == s and buffer.nbytes == NBYTES and buffer.ptr != 0
    during = polyhal.memory_stats()
    assert during["bytes_in_use"] - before["bytes_in_use"] >= NBYTES
    address = buffer.ptr
    buffer.close()
    assert buffer.closed
    buffer.close()  # closing twice is harmless
    with pytest.raises(ValueError, match="closed"):
        buffer.ptr
    assert polyhal.memory_stats()["bytes_in_use"] == before["bytes_in_use"]
    # The same stream reuses its own freed block at once.
    again = polyhal.Buffer(NBYTES, stream=s)
    assert again.ptr == address
    assert polyhal.memory_stats()["reused_same_stream"] > during["reused_same_stream"]


def test_block_read_by_another_stream_is_not_reused_while_it_reads():
    # MindSpore's scenario:
    #   add_s0 = input_s0 + 1                 # stream 0
    #   s1.wait_stream(default_stream)
    #   with StreamCtx(s1):
    #       conv_res = conv2d(add_s0, weight) # long, on stream 1, reads add_s0
    #       ev = s1.record_event()
    #   del add_s0                            # host frees it while stream 1 still reads it
    #   mess_output = mess_input + 1          # must NOT get add_s0's memory
    #   ev.wait()
    s0, s1 = polyhal.Stream(), polyhal.Stream()
    add_s0 = to_device(pattern(0xA5), s0)
    freed_address = add_s0.ptr
    s1.wait_stream(s0)
    with Gate() as gate:
        with polyhal.StreamCtx(s1):
            gate.hold(s1)  # the long operation
            conv_res = polyhal.Buffer(NBYTES)
            conv_res.copy_from(add_s0)  # reads add_s0 on stream 1: the pool sees this use
            ev = s1.record_event()
        before_free = polyhal.memory_stats()
        del add_s0  # freed on stream 0, its allocating stream
        gc.collect()
        pending = polyhal.memory_stats()
        assert pending["bytes_in_use"] <= before_free["bytes_in_use"] - NBYTES
        assert pending["bytes_pending"] >= before_free["bytes_pending"] + NBYTES
        mess_output = to_device(pattern(0x3C), s0)
        assert mess_output.ptr != freed_address, "stream 0 got memory stream 1 still reads"
        gate.open()
    ev.wait(s0)
    s0.synchronize()
    np.testing.assert_array_equal(conv_res.to_numpy(stream=s1), pattern(0xA5))
    np.testing.assert_array_equal(mess_output.to_numpy(stream=s0), pattern(0x3C))
    # Once stream 0 is ordered after stream 1's read, the block is its to reuse.
    assert polyhal.Buffer(NBYTES, stream=s0).ptr == freed_address
    assert polyhal.memory_stats()["bytes_pending"] <= pending["bytes_pending"] - NBYTES


def test_flow_back_reuses_the_block_without_host_synchronisation():
    # Stream 1 records an event after its last use and stream 0 waits on it: after the free,
    # stream 0 gets the block back at once, proven by the event ordering.
    s0, s1 = polyhal.Stream(), polyhal.Stream()
    block = to_device(pattern(0x11), s0)
    address = block.ptr
    s1.wait_stream(s0)
    out = polyhal.Buffer(NBYTES, stream=s1)
    with Gate() as gate:
        gate.hold(s1)
        out.copy_from(block, stream=s1)
        s0.wait_event(s1.record_event())
        before = polyhal.memory_stats()
        block.close()
        reused = polyhal.Buffer(NBYTES, stream=s0)  # while stream 1 is still held
        assert reused.ptr == address
        assert polyhal.memory_stats()["reused_proven_order"] == before["reused_proven_order"] + 1
        gate.open()
    s1.synchronize()
    np.testing.assert_array_equal(out.to_numpy(stream=s1), pattern(0x11))


def test_record_stream_declares_a_use_the_pool_cannot_see():
    # A use hidden from polyhal (here: only declared) keeps the block from other streams.
    s0, s1 = polyhal.Stream(), polyhal.Stream()
    block = polyhal.Buffer(NBYTES, stream=s0)
    address = block.ptr
    with Gate() as gate:
        gate.hold(s1)
        block.record_stream(s1)
        block.close()
        assert polyhal.Buffer(NBYTES, stream=s1).ptr != address
        assert polyhal.Buffer(NBYTES, stream=polyhal.Stream()).ptr != address
        gate.open()
    with pytest.raises(TypeError):
        polyhal.Buffer(8).record_stream(None)


def test_buffer_outlives_its_closed_stream():
    s = polyhal.Stream()
    buffer = to_device(pattern(0x42), s)
    s.close()
    with pytest.raises(ValueError, match="stream is closed"):
        buffer.to_numpy(stream=s)
    np.testing.assert_array_equal(buffer.to_numpy(), pattern(0x42))
    before = polyhal.memory_stats()["bytes_in_use"]
    buffer.close()  # freed in the default stream's order instead
    assert polyhal.memory_stats()["bytes_in_use"] <= before - NBYTES


def test_memory_stats_and_empty_cache():
    stats = polyhal.memory_stats()
    assert set(stats) == {
        "bytes_in_use", "peak_bytes_in_use", "bytes_reserved", "peak_bytes_reserved",
        "bytes_cached", "bytes_pending", "reused_same_stream", "reused_proven_order",
        "reused_observed_complete", "new_segments", "oom_synchronized", "backend_allocations",
        "backend_frees"}
    big = polyhal.Buffer(8 << 20)  # a segment of its own
    assert polyhal.memory_stats()["bytes_reserved"] >= stats["bytes_in_use"] + (8 << 20)
    big.close()
    polyhal.synchronize()
    before = polyhal.memory_stats()
    polyhal.empty_cache()
    after = polyhal.memory_stats()
    assert after["backend_frees"] > before["backend_frees"]
    assert after["bytes_reserved"] <= before["bytes_reserved"] - (8 << 20)
    assert after["bytes_reserved"] >= after["bytes_in_use"]
