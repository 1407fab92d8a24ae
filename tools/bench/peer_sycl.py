# polyhal and dpctl (Intel's SYCL runtime over Unified Runtime) side by side, in one process, on
# the same Intel OpenCL CPU device: microseconds per operation, the best of five rounds.
# Three columns: polyhal's Python API; the same operation as polyhal's C calls alone, made through
# bare ctypes (what the runtime costs without the binding's Python code); dpctl's Python API
# (compiled Cython over the SYCL runtime).
# Run as docs/benchmarks.md says ("polyhal against Intel's SYCL runtime").
import ctypes
import sys
import time

import dpctl
import dpctl.memory as dm
import dpctl.program

import polyhal
from polyhal._capi import HAL_MEMCPY_DEVICE_TO_DEVICE, Handle, hal

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
EMPTY = b"__kernel void empty(__global int* p) {}"
LAUNCHES = 100  # empty kernels enqueued before one wait


def per_op(fn, n=N, per_call=1):
    fn()
    best = None
    for _ in range(5):
        start = time.perf_counter_ns()
        for _ in range(n):
            fn()
        micros = (time.perf_counter_ns() - start) / n / per_call / 1000
        best = micros if best is None or micros < best else best
    return best


q = dpctl.SyclQueue("opencl:cpu", property="in_order")
a, b = dm.MemoryUSMDevice(4096, queue=q), dm.MemoryUSMDevice(4096, queue=q)
sycl_empty = dpctl.program.create_program_from_source(q, EMPTY.decode()).get_sycl_kernel("empty")
s = polyhal.Stream()
pa, pb = polyhal.Buffer(4096, stream=s), polyhal.Buffer(4096, stream=s)
ev = polyhal.Event()
empty = polyhal.Module(EMPTY).function("empty")
handle, pointer = Handle(), ctypes.c_void_p()


def polyhal_launches():
    for _ in range(LAUNCHES):
        empty(1, 1, pa, stream=s)
    s.synchronize()


def sycl_launches():
    for _ in range(LAUNCHES):
        q.submit(sycl_empty, [a], [1])
    q.wait()


def c_stream():
    hal.halCreateStreamWithConfig(ctypes.byref(handle), 0, 0)
    hal.halDestroyStream(handle)


def c_copy():
    hal.halMemcpyAsync(pb.ptr, 4096, pa.ptr, 4096, HAL_MEMCPY_DEVICE_TO_DEVICE, s._handle)
    hal.halSynchronizeStream(s._handle)


def c_record():
    hal.halRecordEvent(ev._handle, s._handle)
    hal.halSynchronizeEvent(ev._handle)


def c_allocate():
    hal.halMallocAsync(ctypes.byref(pointer), 4096, s._handle)
    hal.halFreeAsync(pointer, s._handle)


nothing = float("nan")
rows = [
    ("queue/stream create + destroy", per_op(lambda: polyhal.Stream().close(), 200),
     per_op(c_stream, 200),
     per_op(lambda: dpctl.SyclQueue(q.sycl_context, q.sycl_device, property="in_order"), 200)),
    ("4 KiB device-to-device copy + wait",
     per_op(lambda: (pb.copy_from(pa, stream=s), s.synchronize())), per_op(c_copy),
     per_op(lambda: q.memcpy_async(b, a, 4096).wait())),
    ("event record + wait, idle queue (SYCL: submit_barrier().wait())",
     per_op(lambda: (s.record_event(ev), ev.synchronize())), per_op(c_record),
     per_op(lambda: q.submit_barrier().wait())),
    (f"empty kernel launch ({LAUNCHES} enqueued, then one wait; per launch)",
     per_op(polyhal_launches, N // LAUNCHES, LAUNCHES), nothing,
     per_op(sycl_launches, N // LAUNCHES, LAUNCHES)),
    # polyhal's pair is stream-ordered (halMallocAsync/halFreeAsync through the pool); dpctl has
    # no stream-ordered allocation, so its pair is sycl::malloc_device and sycl::free.
    ("4 KiB allocate + free (SYCL: malloc_device, free)",
     per_op(lambda: polyhal.Buffer(4096, stream=s).close()), per_op(c_allocate),
     per_op(lambda: dm.MemoryUSMDevice(4096, queue=q))),
    # dpctl exposes no host task.
    ("host function round trip (launch + synchronize)",
     per_op(lambda: (s.launch_host_func(lambda: None), s.synchronize())), nothing, nothing),
]
print("| operation | polyhal (Python) | polyhal's C calls (bare ctypes) | dpctl / SYCL (Python) |")
print("| --- | ---: | ---: | ---: |")
for name, *figures in rows:
    print(f"| {name} | " + " | ".join("—" if f != f else f"{f:.1f}" for f in figures) + " |")
