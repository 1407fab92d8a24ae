# polyhal's Python binding and dpctl (Intel's SYCL runtime over Unified Runtime) side by side, in
# one process, on the same Intel OpenCL CPU device: microseconds per operation, the best of five
# rounds. Both sides include their Python layer (ctypes for polyhal, Cython for dpctl).
# Run as docs/benchmarks.md says ("polyhal against Intel's SYCL runtime").
import time, sys
import dpctl, dpctl.memory as dm
import polyhal

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000

def per_op(fn, n=N):
    fn()
    best = None
    for _ in range(5):
        t = time.perf_counter_ns()
        for _ in range(n):
            fn()
        dt = (time.perf_counter_ns() - t) / n / 1000
        best = dt if best is None or dt < best else best
    return best

q = dpctl.SyclQueue("opencl:cpu", property="in_order")
a = dm.MemoryUSMDevice(4096, queue=q); b = dm.MemoryUSMDevice(4096, queue=q)
s = polyhal.Stream()
pa = polyhal.Buffer(4096, stream=s); pb = polyhal.Buffer(4096, stream=s)
ev = polyhal.Event()
rows = []
rows.append(("queue/stream create+destroy", per_op(lambda: polyhal.Stream().close(), 200),
             per_op(lambda: dpctl.SyclQueue(q.sycl_context, q.sycl_device, property="in_order"), 200)))
rows.append(("4 KiB device-to-device copy + wait", per_op(lambda: (pb.copy_from(pa, stream=s), s.synchronize())),
             per_op(lambda: q.memcpy_async(b, a, 4096).wait())))
rows.append(("event record + wait (idle queue)", per_op(lambda: (s.record_event(ev), ev.synchronize())),
             per_op(lambda: q.submit_barrier().wait())))
for name, p, d in rows:
    print(f"| {name} | {p:.1f} | {d:.1f} |")
