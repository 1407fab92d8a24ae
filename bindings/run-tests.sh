#!/usr/bin/env bash
# Tests of the language bindings against a polyhal build tree:
#   - Python: installs bindings/python with pip into <build>/venv (offline, Debian's python3 with
#     its numpy and pytest), then runs pytest with POLYHAL_BACKEND=cpu and, when the build has the
#     OpenCL plugin, with POLYHAL_BACKEND=opencl (on PoCL, and on Intel's OpenCL CPU runtime when
#     tools/install-deps.sh installed it), each also under POLYHAL_CHECK=races,leaks,api; when the build has the cuda, hip or level_zero
#     plugin and its vendor-driver double (tests/backends), also with that backend against the
#     double (Level Zero's behind Debian's loader and its validation layer); then the interop
#     tests again with PyTorch 2.x, from the virtual environment tools/install-deps.sh made in
#     build/python-deps/torch;
#   - Rust: cargo test and the two_streams example of bindings/rust (offline, no crates), on the
#     same backends, built in <build>/rust-target.
# Usage: bindings/run-tests.sh [build-dir]   (default: build/default)
# Debian packages: python3-venv python3-setuptools python3-pip python3-pytest python3-numpy
#                  cargo rustc
set -euo pipefail

bindings=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-${bindings}/../build/default}" && pwd)
lib="${build}/lib"

if [ ! -e "${lib}/libpolyhal.so" ]; then
    echo "bindings: ${lib}/libpolyhal.so is missing: build polyhal in ${build} first" >&2
    exit 1
fi
if [ ! -e "${build}/kernels/python/matmul.so" ]; then
    echo "bindings: ${build}/kernels/python/matmul.so is missing: build the CMake target" \
         "polyhal_python_test_kernels (bindings/CMakeLists.txt)" >&2
    exit 1
fi
backends=(cpu)
if [ -e "${lib}/polyhal/libpolyhal_opencl.so" ]; then
    backends+=(opencl)
fi
# Python only: the GPU plugins against their vendor-driver doubles.
python_backends=("${backends[@]}")
declare -A double_dir=([cuda]="${build}/tests/backends/cuda/cuda_driver"
                       [hip]="${build}/tests/backends/hip/hip_runtime")
for backend in cuda hip; do
    if [ -e "${lib}/polyhal/libpolyhal_${backend}.so" ] && [ -d "${double_dir[${backend}]}" ]; then
        python_backends+=("${backend}")
    fi
done
ze_double="${lib}/libze_polyhal_double.so"
if [ -e "${lib}/polyhal/libpolyhal_level_zero.so" ] && [ -e "${ze_double}" ]; then
    python_backends+=(level_zero)
fi
# The OpenCL backend again on Intel's OpenCL CPU runtime, when the build found it
# (POLYHAL_INTEL_OPENCL_VENDORS, backends/opencl/CMakeLists.txt).
intel_vendors=$(sed -n 's/^POLYHAL_INTEL_OPENCL_VENDORS:PATH=//p' "${build}/CMakeCache.txt")
if [ -e "${lib}/polyhal/libpolyhal_opencl.so" ] && [ -n "${intel_vendors}" ]; then
    python_backends+=(opencl-intel)
fi

# The environment a backend's tests run in: the CUDA and HIP doubles are found on the library
# path; the Level Zero double is a driver Debian's loader takes, with every validation check on.
backend_env() {
    echo "POLYHAL_BACKEND=${1%-intel}"
    case $1 in
        opencl-intel)
            echo "OCL_ICD_VENDORS=${intel_vendors}"
            echo "POLYHAL_OPENCL_PLATFORM=intel"
            ;;
        cuda | hip) echo "LD_LIBRARY_PATH=${double_dir[$1]}${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}" ;;
        level_zero)
            echo "ZE_ENABLE_ALT_DRIVERS=${ze_double}"
            echo "ZE_ENABLE_VALIDATION_LAYER=1"
            echo "ZE_ENABLE_PARAMETER_VALIDATION=1"
            echo "ZE_ENABLE_HANDLE_LIFETIME=1"
            echo "ZE_ENABLE_THREADING_VALIDATION=1"
            echo "ZE_ENABLE_MEMORY_TRACKER=1"
            echo "POLYHAL_ZE_DOUBLE_KERNELS=${build}/kernels/cpu/cts_kernels.so"
            # The double's IPC memory handles are valid in any process (backends/level_zero/device.cpp).
            echo "POLYHAL_LEVEL_ZERO_IPC_MEMORY=portable-handles"
            ;;
    esac
}

echo "== Python: pip install bindings/python into ${build}/venv"
venv="${build}/venv"
if [ ! -x "${venv}/bin/python" ]; then
    /usr/bin/python3 -m venv --system-site-packages "${venv}"
fi
"${venv}/bin/python" -m pip install --quiet --no-build-isolation --no-index \
    --disable-pip-version-check --root-user-action=ignore "${bindings}/python"

unset PYTHONPATH  # test the installed package, not the sources
export PYTHONDONTWRITEBYTECODE=1
export POLYHAL_LIBRARY="${lib}/libpolyhal.so"
export POLYHAL_TEST_KERNEL_DIR="${build}/kernels/python"
for backend in "${python_backends[@]}"; do
    echo "== Python: pytest with POLYHAL_BACKEND=${backend}"
    status=0
    mapfile -t environment < <(backend_env "${backend}")
    (cd "${build}" && env "${environment[@]}" "${venv}/bin/python" -m pytest \
        -p no:cacheprovider -rs "${bindings}/python/tests") || status=$?
    if [ "${status}" -eq 5 ]; then
        echo "bindings: pytest collected no tests" >&2
    fi
    if [ "${status}" -ne 0 ]; then
        exit "${status}"
    fi
done
# Again under checked mode (docs/check.md) on the backends the race corpus covers: a test fails
# if anything is found during it (tests/conftest.py), unless it misuses polyhal on purpose. Leaks
# are reported at exit, after pytest has counted: the run fails if its output has any finding
# (pytest keeps what a passing test wrote, deliberate misuse included, to itself).
for backend in "${backends[@]}"; do
    echo "== Python: pytest with POLYHAL_BACKEND=${backend} POLYHAL_CHECK=races,leaks,api"
    output="${build}/python-checked-${backend}.log"
    (cd "${build}" && env POLYHAL_BACKEND="${backend}" POLYHAL_CHECK=races,leaks,api \
        "${venv}/bin/python" -m pytest -p no:cacheprovider -q "${bindings}/python/tests") \
        2>&1 | tee "${output}"
    if grep -q "check (" "${output}"; then
        echo "bindings: checked mode reported findings outside the tests (above)" >&2
        exit 1
    fi
done

# The interop tests with today's PyTorch (the main runs use Debian's torch 1.13 when present):
# on the CPU backend, where torch and polyhal share host memory, and on the CUDA double, where
# DLPack names the device kDLCUDA and passes the consumer's stream.
torch_python="${bindings}/../build/python-deps/torch/bin/python"
if [ ! -x "${torch_python}" ]; then
    echo "bindings: ${torch_python} is missing (tools/install-deps.sh test installs torch)" >&2
    exit 1
fi
"${torch_python}" -m pip install --quiet --no-build-isolation --no-index \
    --disable-pip-version-check --root-user-action=ignore "${bindings}/python"
torch_version=$("${torch_python}" -c 'import torch; print(torch.__version__)')
torch_backends=(cpu)
[[ " ${python_backends[*]} " == *" cuda "* ]] && torch_backends+=(cuda)
for backend in "${torch_backends[@]}"; do
    echo "== Python: interop tests with torch ${torch_version} and POLYHAL_BACKEND=${backend}"
    mapfile -t environment < <(backend_env "${backend}")
    (cd "${build}" && env "${environment[@]}" "${torch_python}" -m pytest -p no:cacheprovider \
        -rs "${bindings}/python/tests/test_torch_interop.py" \
        "${bindings}/python/tests/test_dlpack.py" "${bindings}/python/tests/test_conventions.py")
done

export POLYHAL_LIB_DIR="${lib}"
export CARGO_TARGET_DIR="${build}/rust-target"
for backend in "${backends[@]}"; do
    echo "== Rust: cargo test and the two_streams example with POLYHAL_BACKEND=${backend}"
    POLYHAL_BACKEND="${backend}" cargo test --offline --manifest-path "${bindings}/rust/Cargo.toml"
    POLYHAL_BACKEND="${backend}" cargo run --offline --quiet \
        --manifest-path "${bindings}/rust/Cargo.toml" --example two_streams
done
echo "== bindings: all tests passed (Python: ${python_backends[*]}; Rust: ${backends[*]})"
