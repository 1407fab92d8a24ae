"""Markdown tables of benchmark results, for tools/gpu-acceptance.sh's summary.

  bench_table.py google BENCH.json   a Google Benchmark JSON report: one row per operation, one
                                     column per side, where names read BM_<Operation>_<Side>[/arg]
                                     (BM_StreamQuery_Polyhal, BM_StreamQuery_Cuda); the median CPU
                                     time of the repetitions (the calling thread's cost per call)
  bench_table.py lines RESULTS.jsonl tools/bench/python_compare.py's output: one row per
                                     operation, one column per side, nanoseconds per call
"""
import json
import re
import sys

SIDE_SUFFIX = re.compile(r"^BM_(?P<operation>.+)_(?P<side>Polyhal|Cuda)$")


def render(rows, sides, unit_note):
    """rows: {operation: {side: text}} in insertion order."""
    if not rows:
        return "(no results)\n"
    lines = ["| operation | " + " | ".join(sides) + " |",
             "|---" * (len(sides) + 1) + "|"]
    for operation, cells in rows.items():
        lines.append(f"| {operation} | " + " | ".join(cells.get(side, "–") for side in sides) +
                     " |")
    return "\n".join(lines) + f"\n\n{unit_note}\n"


def google(path):
    with open(path, encoding="utf-8") as file:
        report = json.load(file)
    rows, sides = {}, []
    for entry in report.get("benchmarks", []):
        aggregate = entry.get("aggregate_name")
        if aggregate not in (None, "median"):
            continue
        name = entry.get("run_name", entry["name"])
        base, _, argument = name.partition("/")
        match = SIDE_SUFFIX.match(base)
        operation, side = ((match["operation"], match["side"].lower()) if match
                           else (base[3:] if base.startswith("BM_") else base, "result"))
        if argument:
            operation += f" ({argument})"
        if side not in sides:
            sides.append(side)
        if entry.get("error_occurred"):
            text = "skipped: " + entry.get("error_message", "error").replace("|", "/")
        else:
            text = f"{entry['cpu_time']:.1f} {entry.get('time_unit', 'ns')}"
        rows.setdefault(operation, {})[side] = text
    return render(rows, sides, "Median CPU time per call of the calling thread "
                               "(Google Benchmark, repetitions' median).")


def lines(path):
    rows, sides, skipped = {}, [], []
    with open(path, encoding="utf-8") as file:
        for line in file:
            line = line.strip()
            if not line.startswith("{"):
                continue
            entry = json.loads(line)
            if "skipped" in entry:
                skipped.append(f"{entry['side']}: skipped: {entry['skipped']}")
                continue
            if entry["side"] not in sides:
                sides.append(entry["side"])
            rows.setdefault(entry["name"], {})[entry["side"]] = f"{entry['ns_per_op']:.0f} ns"
    note = "Nanoseconds per call through Python (time.perf_counter_ns)."
    if skipped:
        note += " " + "; ".join(skipped) + "."
    return render(rows, sides, note)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("google", "lines"):
        sys.exit(__doc__)
    sys.stdout.write(google(sys.argv[2]) if sys.argv[1] == "google" else lines(sys.argv[2]))


if __name__ == "__main__":
    main()
