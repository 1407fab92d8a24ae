#!/bin/sh
# Traces of several processes: a parent writing the trace POLYHAL_TRACE names starts a child that
# inherits it. Each must write a valid file of its own, the child's at <path>.<pid> (or at the
# path with %p expanded where POLYHAL_TRACE has it), and polyhal-trace merge must make one valid
# timeline with both processes.
# Usage: trace_processes_tests.sh <trace_spawn> <polyhal-example> <tools/polyhal-trace> <scratch>
set -eu
spawn=$1
example=$2
tool=$3
scratch=$4
rm -rf "${scratch}"
mkdir -p "${scratch}"

# Prints the process names the merged trace holds, one a line.
process_names() {
    /usr/bin/python3 -c 'import json, sys
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e.get("name") == "process_name": print(e["args"]["name"])' "$1"
}

# The parent's last line names both ids (the child's output comes before it).
ids_of() {
    printf '%s\n' "$1" | tail -n 1
}

# One path: the parent keeps it, the child appends its pid and says so.
trace="${scratch}/run.json"
ids=$(ids_of "$(POLYHAL_TRACE="${trace}" "${spawn}" "${example}" 2> "${scratch}/log")")
parent=${ids#parent }
parent=${parent%% *}
child=${ids##* }
"${tool}" check "${trace}"
"${tool}" check "${trace}.${child}"
grep -q "this process ${child} traces to ${trace}.${child}" "${scratch}/log" ||
    { echo "the child did not log where its trace went" >&2; cat "${scratch}/log" >&2; exit 1; }
"${tool}" merge "${trace}" "${trace}.${child}" -o "${scratch}/merged.json"
"${tool}" check "${scratch}/merged.json"
summary=$("${tool}" summary "${scratch}/merged.json")
case ${summary} in
    *"process ${child}: device 0 default stream"*) ;;
    *) echo "the merged summary lacks the child's stream" >&2; echo "${summary}" >&2; exit 1 ;;
esac
names=$(process_names "${scratch}/merged.json")
echo "${names}"
for pid in "${parent}" "${child}"; do
    case ${names} in
        *"process ${pid}: polyhal host threads"*) ;;
        *) echo "the merged trace lacks process ${pid}" >&2; exit 1 ;;
    esac
done

# A %p pattern: each process writes the file named after its pid.
ids=$(ids_of "$(POLYHAL_TRACE="${scratch}/run-%p.json" "${spawn}" "${example}")")
parent=${ids#parent }
parent=${parent%% *}
child=${ids##* }
"${tool}" check "${scratch}/run-${parent}.json"
"${tool}" check "${scratch}/run-${child}.json"
# What is not a regular file is written as it is, by every process (benchmarks trace to
# /dev/null): nothing is locked, emptied or renamed.
POLYHAL_TRACE=/dev/null "${spawn}" "${example}" > /dev/null 2> "${scratch}/log"
if grep -q "POLYHAL_TRACE" "${scratch}/log"; then
    echo "tracing to /dev/null was refused or renamed:" >&2; cat "${scratch}/log" >&2; exit 1
fi
echo "polyhal-trace: traces of several processes passed"
