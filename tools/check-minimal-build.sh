#!/usr/bin/env bash
# The minimal path: polyhal configures, builds and runs its example on a machine that has none of
# the optional backends' packages, and says clearly what it left out.
#
# The optional packages' headers are hidden, not removed: where the system allows a private mount
# namespace (unshare), an empty folder is mounted over each of them, so CMake finds exactly what a
# machine without them offers. Where it does not (a container without CAP_SYS_ADMIN, a chroot),
# CMake is told to ignore the folders that hold them (CMAKE_IGNORE_PATH). Three checks, each in
# its own build folder under build/:
#   1. the `minimal` preset (every optional backend OFF) builds and runs the example;
#   2. a configure with every optional backend AUTO (tests and benchmarks on) succeeds, builds
#      only cpu, and says for each other backend that it was skipped and why;
#   3. a configure with POLYHAL_BACKEND_HIP=ON fails and names the package to install.
# Usage: tools/check-minimal-build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=$PWD

# The optional backends' headers (and with them CUDA's nvcc and the OpenCL ICD's headers).
hidden_paths=(/usr/include/hip /usr/include/level_zero /usr/include/CL /usr/local/cuda)
# Without a mount namespace: the folders find_path would find them in.
ignored_paths="/usr/include;/usr/local/cuda/include"

if [[ -z ${POLYHAL_MINIMAL_HIDING:-} ]]; then
    namespace=(unshare --mount)
    [[ $(id -u) -eq 0 ]] || namespace+=(--map-root-user)
    if "${namespace[@]}" true 2>/dev/null; then
        exec "${namespace[@]}" env POLYHAL_MINIMAL_HIDING=namespace "$0" "$@"
    fi
    POLYHAL_MINIMAL_HIDING=cmake
fi

hide=()
if [[ ${POLYHAL_MINIMAL_HIDING} == namespace ]]; then
    empty=$(mktemp -d)
    trap 'rm -rf "${empty}"' EXIT
    for path in "${hidden_paths[@]}"; do
        if [[ -d ${path} ]]; then
            mount --bind "${empty}" "${path}"
            echo "minimal: hiding ${path}"
        fi
    done
else
    echo "minimal: no private mount namespace here; CMake ignores ${ignored_paths} instead"
    hide=("-DCMAKE_IGNORE_PATH=${ignored_paths}")
fi

fail() {
    echo "minimal: FAILED: $*" >&2
    exit 1
}

echo "== minimal 1/3: every optional backend OFF: build and run the example"
cmake --preset minimal --fresh "${hide[@]}"
cmake --build --preset minimal

echo "== minimal 2/3: every optional backend AUTO, tests on: only cpu is built, the rest is explained"
auto_build=build/minimal-auto
log=$(cmake -S "${source_dir}" -B "${auto_build}" -G Ninja --fresh "${hide[@]}" \
          -DPOLYHAL_BACKEND_CUDA=AUTO -DPOLYHAL_BACKEND_HIP=AUTO \
          -DPOLYHAL_BACKEND_LEVEL_ZERO=AUTO -DPOLYHAL_BACKEND_OPENCL=AUTO 2>&1) ||
    fail "the AUTO configure failed:"$'\n'"${log}"
echo "${log}" | grep -E '^-- polyhal: .*backend' || true
for backend in cuda hip level_zero opencl; do
    echo "${log}" | grep -q "polyhal: ${backend} backend: SKIPPED: .*; install " ||
        fail "the AUTO configure does not say that ${backend} was skipped and why"
done
echo "${log}" | grep -q "polyhal: backends built: cpu;" ||
    fail "the AUTO configure built more than the cpu backend"

echo "== minimal 3/3: POLYHAL_BACKEND_HIP=ON without HIP's headers fails, naming the package"
if log=$(cmake -S "${source_dir}" -B build/minimal-hip-on -G Ninja --fresh "${hide[@]}" \
             -DPOLYHAL_BACKEND_HIP=ON -DPOLYHAL_BUILD_TESTS=OFF -DPOLYHAL_BUILD_BENCHMARKS=OFF 2>&1); then
    fail "the configure with POLYHAL_BACKEND_HIP=ON succeeded without HIP's headers"
fi
echo "${log}" | sed -n '/CMake Error/,/^$/p' 
echo "${log}" | grep -q "libamdhip64-dev" || fail "the HIP=ON failure does not name libamdhip64-dev"
rm -rf build/minimal-hip-on
echo "== minimal: all three checks passed"
