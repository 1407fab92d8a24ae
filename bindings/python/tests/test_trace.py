"""Traces from Python: polyhal.trace / trace_range, and POLYHAL_TRACE for a whole run."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import polyhal


def spans(document, category, name):
    return [e for e in document["traceEvents"]
            if e["ph"] == "X" and e.get("cat") == category and e["name"] == name]


def test_a_traced_block_holds_its_ranges_calls_flows_and_counters(tmp_path):
    path = tmp_path / "trace.json"
    producer, consumer = polyhal.Stream(), polyhal.Stream()
    data = np.arange(1024, dtype=np.uint32)
    with polyhal.trace(path):
        with polyhal.trace_range("step"):
            buffer = polyhal.Buffer(data.nbytes, stream=producer)
            buffer.copy_from(data, stream=producer)
            consumer.wait_stream(producer)
            result = buffer.to_numpy(np.uint32, stream=consumer)
            consumer.synchronize()
    np.testing.assert_array_equal(result, data)

    document = json.loads(path.read_text())
    assert document["otherData"]["truncated"] is False
    events = document["traceEvents"]
    begins = [e for e in events if e["ph"] == "B" and e["name"] == "step"]
    ends = [e for e in events if e["ph"] == "E" and e["tid"] == begins[0]["tid"]]
    assert len(begins) == 1 and len(ends) == 1
    malloc, = spans(document, "api", "halMallocAsync")
    assert malloc["args"]["bytes"] == data.nbytes
    assert malloc["args"]["result"] == "HAL_SUCCESS"
    assert begins[0]["ts"] <= malloc["ts"] <= ends[0]["ts"]
    wait, = spans(document, "api", "halStreamWaitEvent")
    assert wait["args"]["stream"] != malloc["args"]["stream"]
    # wait_stream's record flows into the wait.
    arrivals = [e for e in events if e["ph"] == "f" and e["name"] == "event"
                and wait["ts"] <= e["ts"] <= wait["ts"] + wait["dur"]]
    assert len(arrivals) == 1
    start, = [e for e in events if e["ph"] == "s" and e["id"] == arrivals[0]["id"]]
    record, = spans(document, "api", "halRecordEvent")
    assert record["ts"] <= start["ts"] <= record["ts"] + record["dur"]
    counters = [e for e in events if e["ph"] == "C" and e["name"] == "pool"]
    assert any(c["args"]["bytesInUse"] >= data.nbytes for c in counters)


def test_a_second_trace_and_a_bad_path_are_refused(tmp_path):
    with pytest.raises(polyhal.InvalidValueError, match="cannot create"):
        polyhal.trace_start(tmp_path / "missing-folder" / "trace.json")
    with polyhal.trace(tmp_path / "trace.json"):
        with pytest.raises(polyhal.InvalidValueError, match="already being written"):
            polyhal.trace_start(tmp_path / "other.json")
    with pytest.raises(polyhal.InvalidValueError, match="no trace"):
        polyhal.trace_stop()


def test_POLYHAL_TRACE_writes_a_whole_run_completed_at_exit(tmp_path):
    path = tmp_path / "run.json"
    code = ("import numpy as np, polyhal\n"
            "with polyhal.trace_range('load'):\n"
            "    b = polyhal.Buffer(4096)\n"
            "    b.copy_from(np.zeros(4096, np.uint8))\n"
            "polyhal.synchronize()\n")
    environment = dict(os.environ, POLYHAL_TRACE=str(path))
    result = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    document = json.loads(path.read_text())
    names = {e["name"] for e in document["traceEvents"] if e["ph"] == "X"}
    assert {"halMallocAsync", "halMemcpyAsync", "halSynchronizeDevice"} <= names
    assert [e["name"] for e in document["traceEvents"] if e["ph"] == "B"] == ["load"]
