#!/usr/bin/env bash
# GPU acceptance in three stages, each well under 10 minutes on a GPU machine, run in order in one
# call or in separate ones (a GPU window allows at most 10 minutes per command). Every step runs
# with POLYHAL_BACKEND=<backend> (default cuda):
#   build   configure (the backend required: -DPOLYHAL_BACKEND_<BACKEND>=ON; Release for a new
#           tree) and build what the other stages run
#   cts     halinfo      the backend's devices (at least one)
#           cts          the full conformance suite, minus the skip list's cases
#           pool         the pool scenarios (the suite's [pool] cases) on their own
#           python       the Python binding's tests (pytest)
#   bench   bench        polyhal against the CUDA driver called directly, cuMemAllocAsync included
#                        (polyhal_cuda_bench; CUDA only: another backend runs the pool benchmark
#                        through the public API, so that the plumbing is exercised)
#           bench-graph  a chain of 100 small operations issued one by one and as one graph launch
#                        (polyhal_graph_bench; CUDA, and the CPU backend for a dry run)
#           bench-python polyhal's Python binding against PyTorch's caching allocator and streams,
#                        when torch is importable and sees a GPU
# No step passes by running nothing: each finds out first how many cases it must run (the suite's
# and the benchmarks' own listings, pytest's collection), fails when it ran fewer or none, and
# prints "ran R of E". The conformance spec comes from the skip list through the same code as the
# CTest runs (cmake/PolyhalCtsSpec.cmake), and every name on the list must leave out one case.
# Each step's output goes to <output>/<step>.log, each step has a time limit (below), and
# <output>/summary.md says what ran, what passed and the figures, for every step run into
# <output> so far (the stages of one window add up). A step that fails does not stop the others.
# Exits 0 when every step run by this call passed.
#
# Usage: tools/gpu-acceptance.sh [--backend NAME] [--skips BACKEND] [--stage NAME]... [--filter SPEC] [--build-dir DIR] [OUTPUT_DIR]
#   --backend NAME   POLYHAL_BACKEND for every step (default cuda); cpu for a dry run without a GPU
#   --skips BACKEND  apply backends/BACKEND/cts_skips.txt (default: the backend's own, if it has
#                    one); the CI's dry run is --backend cpu --skips cuda
#   --stage NAME     build, cts or bench; may be repeated (default: all three, in that order)
#   --filter SPEC    a Catch2 test spec: the cts step runs only its cases (minus the skips), and
#                    the pool and python steps do not run (a rerun of a few cases)
#   --build-dir DIR  build tree (default build/gpu-acceptance); an existing tree keeps its
#                    configuration
#   OUTPUT_DIR       default gpu-acceptance-out
#
# Needs CMake, Ninja, a C++17 compiler and, for the build, spdlog, fmt, Catch2 and Google
# Benchmark. On a machine without Debian's -dev packages (and without network), unpack them on a
# machine with apt and copy .deps along with the tree:
#   apt-get download libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 catch2 libbenchmark-dev \
#       libbenchmark1debian && for p in *.deb; do dpkg-deb -x "$p" .deps/root; done
# .deps/root/usr is then used as CMAKE_PREFIX_PATH, and its libraries as LD_LIBRARY_PATH, in every
# stage. Without Google Benchmark the build goes on without the benchmarks, and the summary says
# so. PYTHON (default python3) runs the Python steps.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
backend=cuda
skips_of=""
build="${root}/build/gpu-acceptance"
out="gpu-acceptance-out"
filter=""
stages=()

# Seconds each step may take: a stage's steps add up to well under 10 minutes.
declare -A time_limit=([configure]=90 [build]=420 [halinfo]=30 [cts]=300 [pool]=90 [python]=120
                       [bench]=180 [bench-graph]=90 [bench-python]=120)

usage() {
    sed -n '/^# Usage:/,/^#   OUTPUT_DIR/p' "$0" | sed 's/^# \{0,1\}//'
    exit "$1"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --backend) [ $# -ge 2 ] || usage 2; backend=$2; shift 2 ;;
        --skips) [ $# -ge 2 ] || usage 2; skips_of=$2; shift 2 ;;
        --stage)
            [ $# -ge 2 ] || usage 2
            case "$2" in
                build | cts | bench) stages+=("$2") ;;
                *) echo "gpu-acceptance: unknown stage $2 (build, cts, bench)" >&2; usage 2 ;;
            esac
            shift 2 ;;
        --filter) [ $# -ge 2 ] || usage 2; filter=$2; shift 2 ;;
        --build-dir) [ $# -ge 2 ] || usage 2; build=$2; shift 2 ;;
        -h | --help) usage 0 ;;
        -*) echo "gpu-acceptance: unknown option $1" >&2; usage 2 ;;
        *) out=$1; shift ;;
    esac
done
[ ${#stages[@]} -gt 0 ] || stages=(build cts bench)
skip_list="${root}/backends/${skips_of:-${backend}}/cts_skips.txt"
if [ ! -f "${skip_list}" ]; then
    # A backend without a skip list runs every case; a list asked for by name must exist.
    [ -z "${skips_of}" ] || { echo "gpu-acceptance: no ${skip_list}" >&2; exit 2; }
    skip_list=""
fi

mkdir -p "${out}/steps" "${build}"
out=$(cd "${out}" && pwd)
build=$(cd "${build}" && pwd)
python=${PYTHON:-python3}
export POLYHAL_BACKEND="${backend}"
deps="${root}/.deps/root/usr"
if [ -d "${deps}" ]; then
    export LD_LIBRARY_PATH="${deps}/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"
fi

failures=0

# The order of the steps in the summary.
declare -A step_order=([environment]=10 [configure]=20 [build]=30 [halinfo]=40 [cts]=50 [pool]=60
                       [python]=70 [bench]=80 [bench-graph]=90 [bench-python]=95)

# record STEP STATUS COUNTS DETAIL: the step's row of the summary (STATUS: passed, failed or
# "not run"; COUNTS: what it ran of what it had to, "ran R of E"), kept in <output>/steps so that
# later stages' summaries include it.
record() {
    local row="| $1 | $2 | ${3//|//} | ${4//|//} | [$1.log]($1.log) |"
    echo "${row}" >"${out}/steps/${step_order[$1]}-$1.row"
    [ "$2" = failed ] && failures=$((failures + 1))
    echo "== $1: $2${3:+ ($3)}${4:+: $4}"
}

# logged STEP COMMAND...: runs COMMAND with its output in <output>/STEP.log, within the step's
# time limit; returns its status (124: out of time).
logged() {
    local step=$1
    shift
    echo "== ${step}: $*"
    {
        echo "\$ $*"
        timeout --kill-after=10 "${time_limit[${step}]}" "$@"
        local status=$?
        [ ${status} -ne 124 ] || echo "gpu-acceptance: ${step} ran out of its ${time_limit[${step}]} s"
        return ${status}
    } >"${out}/${step}.log" 2>&1
}

# counted STEP RAN EXPECTED STATUS DETAIL: records STEP as passed only when its command succeeded
# (STATUS 0) and it ran every one of EXPECTED cases, at least one.
counted() {
    local step=$1 ran=${2:-0} expected=$3 status=$4 detail=$5 why=""
    if [ "${expected}" -eq 0 ]; then
        why="nothing to run"
    elif [ "${status}" -ne 0 ]; then
        why="exit status ${status}"
    elif [ "${ran}" -ne "${expected}" ]; then
        why="ran ${ran}, expected ${expected}"
    fi
    if [ -z "${why}" ]; then
        record "${step}" passed "ran ${ran} of ${expected}" "${detail}"
    else
        record "${step}" failed "ran ${ran} of ${expected}" "${why}; ${detail}"
    fi
}

# ---- environment -------------------------------------------------------------------------
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null \
      | head -n 1)
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "host: $(uname -srm), $(nproc) cores"
    echo "commit: $(git -C "${root}" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "backend: ${backend}; skip list: ${skip_list:-none}"
    echo "gpu: ${gpu:-none (no nvidia-smi, or it found no GPU)}"
    cmake --version | head -n 1
    "${python}" --version 2>&1
    "${python}" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' \
        2>/dev/null || echo "torch: not importable"
} >"${out}/environment.log" 2>&1
record environment passed "" "gpu: ${gpu:-none}"

# ---- stage build -------------------------------------------------------------------------
stage_build() {
    local configure=(cmake -S "${root}" -B "${build}")
    [ -f "${build}/CMakeCache.txt" ] || configure+=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
    # The backend under test is required: a configure that cannot build it fails.
    [ "${backend}" = cpu ] || configure+=("-DPOLYHAL_BACKEND_${backend^^}=ON")
    [ -d "${deps}" ] && configure+=("-DCMAKE_PREFIX_PATH=${deps}")
    local benchmarks=yes
    if ! logged configure "${configure[@]}" -DPOLYHAL_BUILD_BENCHMARKS=ON; then
        if grep -q 'benchmark' "${out}/configure.log"; then
            benchmarks="no: Google Benchmark not found (unpack libbenchmark-dev and libbenchmark1debian into .deps/root)"
            logged configure "${configure[@]}" -DPOLYHAL_BUILD_BENCHMARKS=OFF || benchmarks=failed
        else
            benchmarks=failed
        fi
    fi
    if [ "${benchmarks}" = failed ]; then
        record configure failed "" "cmake failed: $(grep -m 1 'CMake Error' "${out}/configure.log")"
        record build "not run" "" "no configuration"
        return
    fi
    record configure passed "" "benchmarks: ${benchmarks}"
    # What the steps need, of the targets this configuration has.
    local wanted=(halinfo polyhal-cts polyhal_python_test_kernels "polyhal_${backend}"
                  polyhal_cuda_test_kernels polyhal_cuda_bench polyhal_pool_api_bench
                  polyhal_graph_bench) available targets=() target
    available=$(cmake --build "${build}" --target help 2>/dev/null | sed -n 's/: phony$//p')
    for target in "${wanted[@]}"; do
        grep -qxF "${target}" <<<"${available}" && targets+=("${target}")
    done
    # A generator other than Ninja lists its targets differently: then everything is built.
    [ ${#targets[@]} -gt 0 ] || targets=(all)
    if logged build cmake --build "${build}" --target "${targets[@]}"; then
        record build passed "" "targets: ${targets[*]}"
    else
        record build failed "" "$(grep -m 1 -E 'error|FAILED|ran out' "${out}/build.log")"
    fi
}

# ---- stage cts -----------------------------------------------------------------------------
cts="${build}/bin/polyhal-cts"

# The number of cases polyhal-cts would run with the test spec $1 (empty: all of them).
listed_cases() {
    "${cts}" --list-test-names-only ${1:+"$1"} | grep -c .
}

# The number of test cases a Catch2 log says ran ("All tests passed (A assertions in N test
# cases)" or "test cases: N | ..."); its summary line or last line into $2's variable.
catch2_ran() {
    sed -nE 's/^All tests passed \([0-9]+ assertions? in ([0-9]+) test cases?\).*/\1/p
             s/^test cases: *([0-9]+).*/\1/p' "$1" | tail -n 1
}
catch2_summary() {
    grep -E '^(All tests passed|test cases:|No tests ran)' "$1" | tail -n 1 | grep . \
        || tail -n 1 "$1"
}

# run_catch2 STEP FILTER: the suite's cases FILTER selects (empty: all), minus the skip list's.
run_catch2() {
    local step=$1 filter=$2 lines skipped spec selected expected ran status
    if ! lines=$(cmake -DSKIP_LIST="${skip_list}" -DFILTER="${filter}" \
                 -P "${root}/cmake/PolyhalCtsSpec.cmake" 2>"${out}/${step}.log"); then
        record "${step}" failed "" "the skip list is malformed: $(tail -n 1 "${out}/${step}.log")"
        return
    fi
    skipped=$(sed -n 1p <<<"${lines}")
    spec=$(sed -n 2p <<<"${lines}")
    selected=$(listed_cases "${filter}")
    expected=$(listed_cases "${spec}")
    # Each name on the skip list is one case, so the full suite leaves out exactly as many.
    if [ -z "${filter}" ] && [ $((selected - expected)) -ne "${skipped}" ]; then
        record "${step}" failed "ran 0 of ${expected}" "the suite has ${selected} cases and the \
skip list names ${skipped}, but its spec leaves out $((selected - expected)): a name on the list \
is not a case's exact name (or is escaped wrongly)"
        return
    fi
    # From the build tree, where the compiler ran: a case that reads the source tree finds it
    # through __FILE__, a path relative to there.
    (cd "${build}" && logged "${step}" "${cts}" --warn NoTests ${spec:+"${spec}"})
    status=$?
    {
        echo
        echo "selected by the filter '${filter:-(all)}': ${selected}; left out by" \
             "${skip_list:-no skip list}: $((selected - expected)); to run: ${expected}"
        [ -z "${skip_list}" ] || grep -vE '^[[:space:]]*(#|$)' "${skip_list}"
    } >>"${out}/${step}.log"
    ran=$(catch2_ran "${out}/${step}.log")
    counted "${step}" "${ran}" "${expected}" "${status}" "$(catch2_summary "${out}/${step}.log")"
}

# pytest's counts from its JUnit report: "<tests> <skipped> <failures> <errors>".
pytest_counts() {
    "${python}" - "$1" <<'EOF'
import sys, xml.etree.ElementTree as tree
root = tree.parse(sys.argv[1]).getroot()
suite = root if root.tag == "testsuite" else root.find("testsuite")
print(*(suite.get(key, "0") for key in ("tests", "skipped", "failures", "errors")))
EOF
}

run_python() {
    if ! "${python}" -c 'import pytest, numpy' >/dev/null 2>&1; then
        record python "not run" "" "${python} cannot import pytest and numpy"
        return
    fi
    local pytest=(env PYTHONPATH="${root}/bindings/python" PYTHONDONTWRITEBYTECODE=1
                  POLYHAL_LIBRARY="${build}/lib/libpolyhal.so"
                  POLYHAL_TEST_KERNEL_DIR="${build}/kernels/python"
                  "${python}" -m pytest -p no:cacheprovider) expected status tests skipped
    local failed errors
    expected=$(cd "${build}" && "${pytest[@]}" --collect-only -q "${root}/bindings/python/tests" \
               2>/dev/null | grep -cE '::')
    (cd "${build}" && logged python "${pytest[@]}" -rs --junitxml="${out}/python.xml" \
                          "${root}/bindings/python/tests")
    status=$?
    read -r tests skipped failed errors < <(pytest_counts "${out}/python.xml" 2>/dev/null \
                                            || echo 0 0 0 0)
    counted python "$((tests - skipped - failed - errors))" "$((expected - skipped))" \
        "${status}" "${tests} collected, ${skipped} skipped, ${failed} failed, ${errors} errors"
}

stage_cts() {
    if [ ! -x "${cts}" ]; then
        for step in halinfo cts pool python; do
            record "${step}" "not run" "" "no build (stage build first)"
        done
        return
    fi
    local devices
    logged halinfo "${build}/bin/halinfo"
    local status=$?
    devices=$(sed -n 's/^devices: \([0-9]*\)$/\1/p' "${out}/halinfo.log")
    counted halinfo "${devices:-0}" "${devices:-0}" "${status}" \
        "$(grep -m 1 -E '^ +name ' "${out}/halinfo.log" | sed 's/^ *name */device 0: /')"
    run_catch2 cts "${filter}"
    if [ -n "${filter}" ]; then
        record pool "not run" "" "--filter given"
        record python "not run" "" "--filter given"
        return
    fi
    run_catch2 pool "[pool]"
    run_python
}

# ---- stage bench ---------------------------------------------------------------------------
# run_bench STEP PROGRAM FILTER MIN_TIME: one benchmark program, its table into the summary.
run_bench() {
    local step=$1 program=$2 filter=$3 min_time=$4 expected status counts
    rm -f "${out}/steps/${step_order[${step}]}-${step}.md"
    if [ ! -x "${build}/bin/${program}" ]; then
        record "${step}" "not run" "" "${program} was not built"
        return
    fi
    expected=$("${build}/bin/${program}" --benchmark_list_tests=true \
               --benchmark_filter="${filter}" 2>/dev/null | grep -c .)
    logged "${step}" "${build}/bin/${program}" --benchmark_filter="${filter}" \
        --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
        --benchmark_min_time="${min_time}" --benchmark_out="${out}/${step}.json" \
        --benchmark_out_format=json
    status=$?
    # "<benchmarks measured> <benchmarks that reported an error>"
    counts=$("${python}" - "${out}/${step}.json" <<'EOF' 2>/dev/null || echo 0 0
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
names = {run["run_name"] for run in runs if run.get("aggregate_name", "mean") == "mean"}
errors = {run["run_name"] for run in runs if run.get("error_occurred")}
print(len(names - errors), len(errors))
EOF
)
    counted "${step}" "${counts% *}" "${expected}" "${status}" \
        "${program}; ${counts#* } reported an error"
    if [ -s "${out}/${step}.json" ]; then
        {
            echo "### ${program}"
            echo
            "${python}" "${root}/tools/bench/bench_table.py" google "${out}/${step}.json"
            echo
        } >"${out}/steps/${step_order[${step}]}-${step}.md"
    fi
}

stage_bench() {
    local built=yes
    [ -x "${cts}" ] || built="no build (stage build first)"
    if [ "${built}" != yes ]; then
        for step in bench bench-graph bench-python; do record "${step}" "not run" "" "${built}"; done
        return
    fi
    if [ "${backend}" = cuda ]; then
        run_bench bench polyhal_cuda_bench . 0.2
    else
        run_bench bench polyhal_pool_api_bench 'ApiSameStreamPair|ApiProvenOrderReuse' 0.05
    fi
    case "${backend}" in
        cuda | cpu) run_bench bench-graph polyhal_graph_bench "/${backend}\$" 0.2 ;;
        *) record bench-graph "not run" "" "polyhal_graph_bench has no ${backend} pair" ;;
    esac
    local table="${out}/steps/${step_order[bench-python]}-bench-python.md"
    rm -f "${table}"
    if PYTHONPATH="${root}/bindings/python" PYTHONDONTWRITEBYTECODE=1 \
            POLYHAL_LIBRARY="${build}/lib/libpolyhal.so" \
            timeout --kill-after=10 "${time_limit[bench-python]}" \
            "${python}" "${root}/tools/bench/python_compare.py" >"${out}/bench-python.jsonl" \
            2>"${out}/bench-python.log"; then
        local torch_note
        torch_note=$(sed -n 's/.*"skipped": "\(.*\)"}/\1/p' "${out}/bench-python.jsonl")
        record bench-python passed "" "${torch_note:-polyhal and torch}"
        {
            echo "### Python: polyhal binding and PyTorch"
            echo
            "${python}" "${root}/tools/bench/bench_table.py" lines "${out}/bench-python.jsonl"
            echo
        } >"${table}"
    else
        record bench-python failed "" "$(tail -n 1 "${out}/bench-python.log")"
    fi
}

for stage in "${stages[@]}"; do
    echo "== stage ${stage}: start ($(date -u +%T))"
    started=${SECONDS}
    "stage_${stage}"
    echo "== stage ${stage}: ${failures} failed so far, $((SECONDS - started)) s"
done

# ---- summary -------------------------------------------------------------------------------
{
    echo "# polyhal acceptance run: POLYHAL_BACKEND=${backend}"
    echo
    sed 's/^/    /' "${out}/environment.log"
    echo
    echo "| step | result | cases | detail | log |"
    echo "|---|---|---|---|---|"
    cat "${out}"/steps/*.row
    if compgen -G "${out}/steps/*.md" >/dev/null; then
        echo
        echo "## Benchmarks"
        echo
        cat "${out}"/steps/*.md
    fi
} >"${out}/summary.md"
echo "== summary: ${out}/summary.md (this call: stages ${stages[*]}, ${failures} failed)"
[ "${failures}" -eq 0 ]
