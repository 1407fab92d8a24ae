#!/bin/sh
# Builds the fuzz stage with clang-14 (ASan+UBSan, libFuzzer) in build/fuzz and runs it: the
# API-sequence fuzzer for a bounded time from the seed corpus, and every single-field mutant of the
# CPU conformance kernels loaded as a module (a few seconds). Fails on any finding; the fuzzer's
# crashing input is left in build/fuzz as crash-<hash>, and `build/fuzz/bin/api_sequence_fuzzer
# <file>` replays it; `build/fuzz/bin/module_image_mutations <module> <field> --verbose` replays
# the mutants of one field.
#
#   tests/fuzz/run.sh [seconds]      (default 60)
set -eu
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
cmake -S . -B build/fuzz -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link \
  -DPOLYHAL_SANITIZE=address,undefined \
  -DPOLYHAL_BUILD_BENCHMARKS=OFF -DPOLYHAL_BUILD_EXAMPLES=OFF \
  -DPOLYHAL_FUZZ_SECONDS="$seconds" >/dev/null
cmake --build build/fuzz --target api_sequence_fuzzer module_image_mutations
cd build/fuzz && ctest -R '^fuzz\.' --output-on-failure
