#!/bin/sh
# tools/polyhal-trace on a real trace: the README's example traced through POLYHAL_TRACE must be
# valid (check), summarised with its streams and pool, and drawn where matplotlib is installed;
# a file that breaks the format's rules must fail the check.
# Usage: polyhal_trace_tests.sh <polyhal-example> <tools/polyhal-trace> <scratch folder>
set -eu
example=$1
tool=$2
scratch=$3
mkdir -p "${scratch}"
trace="${scratch}/example-trace.json"
rm -f "${trace}"

POLYHAL_TRACE="${trace}" "${example}" > /dev/null
"${tool}" check "${trace}"
summary=$("${tool}" summary "${trace}")
echo "${summary}"
for expected in "device 0 default stream" "longest operations:" "longest waits:" \
                "longest idle gaps" "bytesInUse" "bytesReserved"; do
    case ${summary} in
        *"${expected}"*) ;;
        *) echo "summary lacks '${expected}'" >&2; exit 1 ;;
    esac
done
# Piped into a reader that has gone (as `head` goes after its lines), summary ends without a word
# on stderr: the pipe's read end is closed before the tool starts, so its first write fails.
/usr/bin/python3 - "${tool}" "${trace}" << 'EOF'
import os, subprocess, sys
reader, writer = os.pipe()
os.close(reader)
run = subprocess.run([sys.argv[1], "summary", sys.argv[2]], stdout=writer, stderr=subprocess.PIPE)
if run.stderr:
    sys.exit("summary into a closed pipe wrote to stderr:\n" + run.stderr.decode())
EOF
if /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then
    rm -f "${scratch}/timeline.png"
    "${tool}" plot "${trace}" -o "${scratch}/timeline.png"
    test -s "${scratch}/timeline.png"
else
    echo "plot not tried: python3-matplotlib is not installed"
fi

broken="${scratch}/broken-trace.json"
printf '%s\n' '{"traceEvents":[' \
    '{"ph":"E","name":"","pid":1,"tid":1,"ts":1},' \
    '{"ph":"s","name":"event","cat":"flow","pid":1,"tid":1,"ts":2,"id":5}]}' > "${broken}"
if "${tool}" check "${broken}"; then
    echo "check accepted an unbalanced end and a flow that never arrives" >&2
    exit 1
fi
echo "polyhal-trace: all checks passed"
