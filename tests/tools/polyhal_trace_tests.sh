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
