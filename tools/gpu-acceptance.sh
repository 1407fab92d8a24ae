#!/usr/bin/env bash
# GPU acceptance in one command. Configures and builds polyhal, then runs with
# POLYHAL_BACKEND=<backend> (default cuda):
#   halinfo          the backend and its devices
#   cts              the full conformance suite, minus backends/<backend>/cts_skips.txt
#                    (each skip is listed with its reason)
#   pool             the pool scenarios (the suite's [pool] cases) on their own
#   python           the Python binding's tests (pytest)
#   bench            polyhal against the CUDA driver called directly, cuMemAllocAsync included
#                    (polyhal_cuda_bench; CUDA only)
#   bench-graph      a chain of 100 small operations issued one by one and as one graph launch
#                    (polyhal_graph_bench; CUDA, and the CPU backend for a dry run)
#   bench-python     polyhal's Python binding against PyTorch's caching allocator and streams,
#                    when torch is importable and sees a GPU
# Each step's output goes to <output>/<step>.log; <output>/summary.md has one row per step and
# the benchmark tables. A step that fails does not stop the others. Exits 0 when every step that
# ran passed.
#
# Usage: tools/gpu-acceptance.sh [--backend NAME] [--build-dir DIR] [OUTPUT_DIR]
#   --backend NAME   POLYHAL_BACKEND for every step (default cuda). With another backend (cpu,
#                    for a dry run without a GPU) every step runs except the CUDA-only one:
#                    `bench` then runs the pool benchmark through the public API instead, so that
#                    the benchmark plumbing is exercised too.
#   --build-dir DIR  build tree (default build/gpu-acceptance); an existing tree keeps its
#                    configuration, a new one is configured as Release
#   OUTPUT_DIR       default gpu-acceptance-out
#
# Needs CMake, Ninja, a C++17 compiler and, for the build, spdlog, fmt, Catch2 and Google
# Benchmark. On a machine without Debian's -dev packages (and without network), unpack them on a
# machine with apt and copy .deps along with the tree:
#   apt-get download libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 catch2 libbenchmark-dev \
#       libbenchmark1debian && for p in *.deb; do dpkg-deb -x "$p" .deps/root; done
# .deps/root/usr is then used as CMAKE_PREFIX_PATH. Without Google Benchmark the build goes on
# without the benchmarks, and the summary says so. PYTHON (default python3) runs the Python steps.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
backend=cuda
build="${root}/build/gpu-acceptance"
out="gpu-acceptance-out"

usage() {
    sed -n '/^# Usage:/,/^#   OUTPUT_DIR/p' "$0" | sed 's/^# \{0,1\}//'
    exit "$1"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --backend) [ $# -ge 2 ] || usage 2; backend=$2; shift 2 ;;
        --build-dir) [ $# -ge 2 ] || usage 2; build=$2; shift 2 ;;
        -h | --help) usage 0 ;;
        -*) echo "gpu-acceptance: unknown option $1" >&2; usage 2 ;;
        *) out=$1; shift ;;
    esac
done

mkdir -p "${out}" "${build}"
out=$(cd "${out}" && pwd)
build=$(cd "${build}" && pwd)
python=${PYTHON:-python3}
export POLYHAL_BACKEND="${backend}"

summary_rows=()
failures=0

# record STEP STATUS DETAIL: one row of the summary (STATUS: passed, failed or "not run").
record() {
    summary_rows+=("| $1 | $2 | ${3//|//} | [$1.log]($1.log) |")
    [ "$2" = failed ] && failures=$((failures + 1))
    echo "== $1: $2${3:+ ($3)}"
}

# logged STEP COMMAND...: runs COMMAND with its output in <output>/STEP.log; returns its status.
logged() {
    local step=$1
    shift
    echo "== ${step}: $*"
    {
        echo "\$ $*"
        "$@"
    } >"${out}/${step}.log" 2>&1
}

# The Catch2 test spec that leaves out the cases backends/<backend>/cts_skips.txt lists
# ("<exact test case name> # <reason>"); the skips and their reasons go to the log.
skip_spec() {
    local file="${root}/backends/${backend}/cts_skips.txt" line name spec=""
    [ -f "${file}" ] || return 0
    while IFS= read -r line || [ -n "${line}" ]; do
        [[ "${line}" =~ ^[[:space:]]*(#|$) ]] && continue
        name=${line%%#*}
        name=${name%"${name##*[![:space:]]}"}
        spec+=" ~\"${name}\""
    done <"${file}"
    echo "${spec# }"
}

# The summary line of a Catch2 or pytest log, else its last line (a run that stopped early).
catch2_result() {
    grep -E '^(All tests passed|test cases:)' "$1" | tail -n 1 | grep . || tail -n 1 "$1"
}
pytest_result() {
    grep -E '^=+ .*(passed|failed|error|skipped).* =+$' "$1" | tail -n 1 | tr -d '=' | grep . \
        || tail -n 1 "$1"
}

# ---- environment -------------------------------------------------------------------------
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null \
      | head -n 1)
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "host: $(uname -srm)"
    echo "commit: $(git -C "${root}" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "backend: ${backend}"
    echo "gpu: ${gpu:-none (no nvidia-smi, or it found no GPU)}"
    cmake --version | head -n 1
    "${python}" --version 2>&1
    "${python}" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' \
        2>/dev/null || echo "torch: not importable"
} >"${out}/environment.log" 2>&1
record environment passed "gpu: ${gpu:-none}"

# ---- configure and build -------------------------------------------------------------------
deps="${root}/.deps/root/usr"
configure=(cmake -S "${root}" -B "${build}" -G Ninja)
[ -f "${build}/CMakeCache.txt" ] || configure+=(-DCMAKE_BUILD_TYPE=Release)
if [ -d "${deps}" ]; then
    configure+=("-DCMAKE_PREFIX_PATH=${deps}")
    export LD_LIBRARY_PATH="${deps}/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"
fi
benchmarks=yes
if ! logged configure "${configure[@]}" -DPOLYHAL_BUILD_BENCHMARKS=ON; then
    if grep -q 'benchmark' "${out}/configure.log"; then
        benchmarks="no: Google Benchmark not found (unpack libbenchmark-dev and libbenchmark1debian into .deps/root)"
        logged configure "${configure[@]}" -DPOLYHAL_BUILD_BENCHMARKS=OFF || benchmarks=failed
    else
        benchmarks=failed
    fi
fi
if [ "${benchmarks}" = failed ]; then
    record configure failed "cmake failed"
    built=no
else
    record configure passed "benchmarks: ${benchmarks}"
    # What the steps need, of the targets this configuration has.
    wanted=(halinfo polyhal-cts polyhal_python_test_kernels "polyhal_${backend}"
            polyhal_cuda_test_kernels polyhal_cuda_bench polyhal_pool_api_bench
            polyhal_graph_bench)
    available=$(cmake --build "${build}" --target help 2>/dev/null | sed -n 's/: phony$//p')
    targets=()
    for target in "${wanted[@]}"; do
        grep -qxF "${target}" <<<"${available}" && targets+=("${target}")
    done
    # A generator other than Ninja lists its targets differently: then everything is built.
    [ ${#targets[@]} -gt 0 ] || targets=(all)
    if logged build cmake --build "${build}" --target "${targets[@]}"; then
        record build passed "targets: ${targets[*]}"
        built=yes
    else
        record build failed "$(grep -m 1 -E 'error|FAILED' "${out}/build.log")"
        built=no
    fi
fi

# ---- tests ---------------------------------------------------------------------------------
run_catch2() {
    local step=$1 spec=$2
    if logged "${step}" "${build}/bin/polyhal-cts" ${spec:+"${spec}"}; then
        record "${step}" passed "$(catch2_result "${out}/${step}.log")"
    else
        record "${step}" failed "$(catch2_result "${out}/${step}.log")"
    fi
}

if [ "${built}" = yes ]; then
    if logged halinfo "${build}/bin/halinfo"; then
        record halinfo passed "$(grep -m 1 '^devices:' "${out}/halinfo.log");$(grep -m 1 \
            -E '^ +name ' "${out}/halinfo.log" | sed 's/^ *name */ device 0: /')"
    else
        record halinfo failed "$(tail -n 1 "${out}/halinfo.log")"
    fi

    skips=$(skip_spec)
    skip_count=$(grep -o '~"' <<<"${skips}" | wc -l)
    run_catch2 cts "${skips}"
    {
        echo
        echo "skipped for ${backend} (backends/${backend}/cts_skips.txt): ${skip_count}"
        grep -vE '^[[:space:]]*(#|$)' "${root}/backends/${backend}/cts_skips.txt" \
            2>/dev/null
    } >>"${out}/cts.log"
    run_catch2 pool "[pool]${skips:+ ${skips}}"

    if ! "${python}" -c 'import pytest, numpy' >/dev/null 2>&1; then
        record python "not run" "${python} cannot import pytest and numpy"
    elif (cd "${build}" && PYTHONPATH="${root}/bindings/python" PYTHONDONTWRITEBYTECODE=1 \
          POLYHAL_LIBRARY="${build}/lib/libpolyhal.so" \
          POLYHAL_TEST_KERNEL_DIR="${build}/kernels/python" \
          logged python "${python}" -m pytest -p no:cacheprovider -rs \
          --junitxml="${out}/python.xml" "${root}/bindings/python/tests"); then
        record python passed "$(pytest_result "${out}/python.log")"
    else
        record python failed "$(pytest_result "${out}/python.log")"
    fi
else
    for step in halinfo cts pool python; do record "${step}" "not run" "no build"; done
fi

# ---- benchmarks ----------------------------------------------------------------------------
bench_tables=()
# run_bench STEP PROGRAM FILTER MIN_TIME: one benchmark program, its table into the summary.
run_bench() {
    local step=$1 program=$2 filter=$3 min_time=$4
    if [ ! -x "${build}/bin/${program}" ]; then
        record "${step}" "not run" "${program} was not built"
    elif logged "${step}" "${build}/bin/${program}" --benchmark_filter="${filter}" \
            --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
            --benchmark_min_time="${min_time}" --benchmark_out="${out}/${step}.json" \
            --benchmark_out_format=json; then
        if grep -q 'ERROR OCCURRED' "${out}/${step}.log"; then
            record "${step}" failed "${program}: some benchmarks could not run (see the table)"
        else
            record "${step}" passed "${program}"
        fi
        bench_tables+=("### ${program}" ""
                       "$("${python}" "${root}/tools/bench/bench_table.py" google \
                           "${out}/${step}.json")" "")
    else
        record "${step}" failed "${program} exited with an error"
    fi
}

if [ "${built}" != yes ] || [ "${benchmarks}" != yes ]; then
    record bench "not run" "${benchmarks/yes/no build}"
    record bench-graph "not run" "${benchmarks/yes/no build}"
else
    if [ "${backend}" = cuda ]; then
        run_bench bench polyhal_cuda_bench . 0.2
    else
        # polyhal_cuda_bench is CUDA-only; the pool through the API exercises the same plumbing.
        run_bench bench polyhal_pool_api_bench 'ApiSameStreamPair|ApiProvenOrderReuse' 0.05
    fi
    case "${backend}" in
        cuda | cpu) run_bench bench-graph polyhal_graph_bench "/${backend}\$" 0.2 ;;
        *) record bench-graph "not run" "polyhal_graph_bench has no ${backend} pair" ;;
    esac
fi

if [ "${built}" != yes ]; then
    record bench-python "not run" "no build"
elif PYTHONPATH="${root}/bindings/python" PYTHONDONTWRITEBYTECODE=1 \
        POLYHAL_LIBRARY="${build}/lib/libpolyhal.so" \
        "${python}" "${root}/tools/bench/python_compare.py" >"${out}/bench-python.jsonl" \
        2>"${out}/bench-python.log"; then
    torch_note=$(sed -n 's/.*"skipped": "\(.*\)"}/\1/p' "${out}/bench-python.jsonl")
    record bench-python passed "${torch_note:-polyhal and torch}"
    bench_tables+=("### Python: polyhal binding and PyTorch" ""
                   "$("${python}" "${root}/tools/bench/bench_table.py" lines \
                       "${out}/bench-python.jsonl")" "")
else
    record bench-python failed "$(tail -n 1 "${out}/bench-python.log")"
fi

# ---- summary -------------------------------------------------------------------------------
{
    echo "# polyhal acceptance run: POLYHAL_BACKEND=${backend}"
    echo
    sed 's/^/    /' "${out}/environment.log"
    echo
    echo "| step | result | detail | log |"
    echo "|---|---|---|---|"
    printf '%s\n' "${summary_rows[@]}"
    echo
    if [ ${#bench_tables[@]} -gt 0 ]; then
        echo "## Benchmarks"
        echo
        printf '%s\n' "${bench_tables[@]}"
    fi
} >"${out}/summary.md"
echo "== summary: ${out}/summary.md (${failures} failed)"
[ "${failures}" -eq 0 ]
