#!/usr/bin/env bash
# Runs every test polyhal has, the way CI does, after installing the Debian packages it needs
# (tools/install-deps.sh test):
#   default   the optimised build with every backend required (a missing package fails the
#             configure): unit tests, the conformance suite on every backend it can run, loader
#             tests, the example; then tools/gpu-acceptance.sh's conformance stage, dry (the CPU
#             backend with the CUDA skip list);
#   bindings  the Python and Rust bindings' tests on that build;
#   sdk       install, the out-of-tree plugin template, the installed conformance suite on it;
#   minimal   the example built and run with every optional backend OFF and their headers hidden,
#             and the configure messages for AUTO and ON (tools/check-minimal-build.sh);
#   asan      the C/C++ tests built with AddressSanitizer + UndefinedBehaviorSanitizer;
#   tsan      the same built with ThreadSanitizer;
#   fuzz      the API-sequence fuzzer (libFuzzer, clang, ASan+UBSan) for a bounded time from its
#             seed corpus (tests/fuzz/run.sh).
# Each stage prints its name and, at the end, its time.
# Usage: tools/run-tests.sh [stage ...]   (no argument: all of them, in this order)
set -euo pipefail
cd "$(dirname "$0")/.."

all_stages=(default bindings sdk minimal asan tsan fuzz)
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=("${all_stages[@]}")

run_stage() {
    case $1 in
        default)
            cmake --workflow --preset default
            # The GPU acceptance run's conformance stage, dry, on that build: the CPU backend with
            # the CUDA skip list; it fails unless it ran every case it had to.
            tools/gpu-acceptance.sh --backend cpu --skips cuda --stage cts --build-dir build/default \
                build/default/gpu-acceptance-dry-run
            ;;
        asan | tsan) cmake --workflow --preset "$1" ;;
        bindings) bindings/run-tests.sh build/default ;;
        sdk) examples/plugin-template/check-sdk.sh build/default ;;
        minimal) tools/check-minimal-build.sh ;;
        fuzz) tests/fuzz/run.sh ;;
        *)
            echo "run-tests: unknown stage '$1' (stages: ${all_stages[*]})" >&2
            return 2
            ;;
    esac
}

tools/install-deps.sh test

timings=()
for stage in "${stages[@]}"; do
    echo "== ${stage}: start ($(date +%T))"
    started=${SECONDS}
    run_stage "${stage}"
    elapsed=$((SECONDS - started))
    timings+=("$(printf '%-9s %4d:%02d' "${stage}" $((elapsed / 60)) $((elapsed % 60)))")
    echo "== ${stage}: passed in ${elapsed} s"
done
echo "== stage times (min:s)"
printf '   %s\n' "${timings[@]}"
echo "== all test stages passed: ${stages[*]}"
