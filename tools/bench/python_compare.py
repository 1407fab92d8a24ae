"""Per-operation host cost through Python: polyhal's binding against PyTorch's CUDA caching
allocator and streams, when torch is importable and sees a GPU.

Each operation is timed over many iterations with time.perf_counter_ns, after a warm-up, the
stream drained every DRAIN iterations with the clock stopped (as the C++ benchmarks do).
Prints one JSON object per line: {"name", "side", "ns_per_op", "iterations"}; a side that cannot
run prints {"side", "skipped": reason} instead.

Usage: python3 tools/bench/python_compare.py [--iterations N]
Needs the polyhal package importable (PYTHONPATH=bindings/python) and POLYHAL_LIBRARY.
"""
import argparse
import json
import time

DRAIN = 1024
SIZES = (256, 64 << 10, 4 << 20)


def measure(operation, drain, iterations):
    """Nanoseconds per call of operation(), the clock stopped while drain() runs."""
    for _ in range(min(iterations, DRAIN)):
        operation()
    drain()
    elapsed = 0
    done = 0
    while done < iterations:
        batch = min(DRAIN, iterations - done)
        start = time.perf_counter_ns()
        for _ in range(batch):
            operation()
        elapsed += time.perf_counter_ns() - start
        drain()
        done += batch
    return elapsed / iterations


def report(name, side, ns_per_op, iterations):
    print(json.dumps({"name": name, "side": side, "ns_per_op": round(ns_per_op, 1),
                      "iterations": iterations}), flush=True)


def polyhal_side(iterations):
    import polyhal

    stream = polyhal.Stream()
    event = polyhal.Event()
    report("stream query", "polyhal", measure(stream.query, stream.synchronize, iterations),
           iterations)
    report("event record", "polyhal",
           measure(lambda: stream.record_event(event), stream.synchronize, iterations), iterations)
    for size in SIZES:
        def allocate_and_free():
            polyhal.Buffer(size, stream=stream).close()

        report(f"allocate+free {size} B", "polyhal",
               measure(allocate_and_free, stream.synchronize, iterations), iterations)


def torch_side(iterations):
    try:
        import torch
    except ImportError as error:
        return f"torch is not importable ({error})"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    stream = torch.cuda.Stream()
    event = torch.cuda.Event()
    report("stream query", "torch", measure(stream.query, stream.synchronize, iterations),
           iterations)
    report("event record", "torch",
           measure(lambda: event.record(stream), stream.synchronize, iterations), iterations)
    with torch.cuda.stream(stream):
        for size in SIZES:
            def allocate_and_free():
                block = torch.empty(size, dtype=torch.uint8, device="cuda")
                del block  # back to the caching allocator, in the stream's order

            report(f"allocate+free {size} B", "torch",
                   measure(allocate_and_free, stream.synchronize, iterations), iterations)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=20000)
    iterations = parser.parse_args().iterations
    polyhal_side(iterations)
    skipped = torch_side(iterations)
    if skipped:
        print(json.dumps({"side": "torch", "skipped": skipped}), flush=True)


if __name__ == "__main__":
    main()
