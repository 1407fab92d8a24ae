#!/usr/bin/env bash
# Runs every test polyhal has, the way CI does:
#   1. the optimised build: unit tests, the conformance suite on the CPU backend and on OpenCL
#      (PoCL), loader tests, the example, then the Python and Rust bindings' tests, then the SDK
#      check (install, out-of-tree plugin template, installed conformance suite against it);
#   2. the same C/C++ tests built with AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the same built with ThreadSanitizer.
# Usage: tools/run-tests.sh [default|asan|tsan ...]   (no argument: all three)
set -euo pipefail
cd "$(dirname "$0")/.."

presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(default asan tsan)

for preset in "${presets[@]}"; do
    echo "== ${preset}: configure, build, test"
    cmake --workflow --preset "${preset}"
    if [ "${preset}" = default ]; then
        echo "== bindings (Python, Rust) on build/default"
        bindings/run-tests.sh build/default
        echo "== SDK: install, build the plugin template out of tree, run the installed CTS on it"
        examples/plugin-template/check-sdk.sh build/default
    fi
done
echo "== all test runs passed: ${presets[*]}"
