#!/usr/bin/env bash
# tools/gpu-acceptance.sh cannot pass by running nothing: its cts stage on the CPU backend, with
# the CUDA skip list applied, fails when its filter matches no case (one that names no case, and
# one whose only case the skip list leaves out), and passes when it runs every case it selected.
# Usage: gpu_acceptance_tests.sh <build tree with polyhal-cts and halinfo> <scratch folder>
set -uo pipefail
tool="$(cd "$(dirname "$0")/../.." && pwd)/tools/gpu-acceptance.sh"
build=$1
scratch=$2
failed=0
mkdir -p "${scratch}"

# run NAME EXPECTED_STATUS ROW_PATTERN ARGS...: the cts stage with ARGS must exit with
# EXPECTED_STATUS (0, or 1 for any failure) and its summary's cts row must match ROW_PATTERN.
run() {
    local name=$1 expected=$2 pattern=$3 status row
    shift 3
    rm -rf "${scratch:?}/${name}"
    "${tool}" --backend cpu --skips cuda --stage cts --build-dir "${build}" "$@" \
        "${scratch}/${name}" >"${scratch}/${name}.out" 2>&1
    status=$?
    [ "${status}" -eq 0 ] || status=1
    row=$(grep '^| cts |' "${scratch}/${name}/summary.md" 2>/dev/null)
    if [ "${status}" -ne "${expected}" ] || ! grep -qE -- "${pattern}" <<<"${row}"; then
        echo "FAIL ${name}: exit ${status} (expected ${expected}), cts row: ${row:-none}"
        cat "${scratch}/${name}.out"
        failed=1
    else
        echo "ok   ${name}: ${row}"
    fi
}

run no-such-case 1 '^\| cts \| failed \| ran 0 of 0 \| nothing to run' \
    --filter '"no conformance case has this name"'
run only-skipped-case 1 '^\| cts \| failed \| ran 0 of 0 \| nothing to run' \
    --filter '"a failing kernel surfaces LAUNCH_FAILED once\, at synchronisation"'
run pool-cases 0 '^\| cts \| passed \| ran [1-9][0-9]* of [1-9][0-9]* \|' --filter '[pool]'
exit "${failed}"
