#!/usr/bin/env bash
# Installs the Debian 12 packages polyhal needs; the one list of them in the repository.
#
#   tools/install-deps.sh example   build the library and run the example (README's first command)
#   tools/install-deps.sh test      everything tools/run-tests.sh builds and runs (the default)
#   tools/install-deps.sh all       the tests plus the interop and profiling tools
#   tools/install-deps.sh --list [example|test|all]   print the packages, install nothing
#
# Idempotent and quiet when everything is present: `apt-get update` and `apt-get install` run
# only for packages that are missing. Runs apt-get as root, or through sudo for another user.
#
# From PyPI (the test profile), into virtual environments in build/python-deps that the build
# owns (never the system's Python), kept between runs while build/ stays: Intel's OpenCL runtime
# for the CPU, a second OpenCL platform beside PoCL (build/python-deps/venv; the folder
# build/python-deps/opencl-vendors lists it and the installed drivers for the ICD loader,
# OCL_ICD_VENDORS, and CMake finds it there); and PyTorch 2.x, the client of the Python interop
# tests (build/python-deps/torch, which also sees Debian's Python packages: pytest, numpy).
#
# Not a Debian package: NVIDIA's CUDA toolkit, whose cuda.h the cuda backend builds against
# (searched at /usr/local/cuda, $CUDA_PATH, $CUDA_HOME). The test profile checks that it is there.
set -euo pipefail

# What building the library and running the example needs.
example_packages=(cmake ninja-build g++ libspdlog-dev libfmt-dev)
# What tools/run-tests.sh needs on top: Catch2 and Google Benchmark; OpenCL headers, ICD loader
# and PoCL (the OpenCL backend and its CPU device); HIP and Level Zero headers and the Level Zero
# loader with its validation layer (backends and their vendor-driver doubles); clang and
# llvm-spirv (SPIR-V kernels); hipcc (the HIP kernels' AMD GPU code objects); libFuzzer and
# clang's sanitizer runtimes (the fuzz stage); Python and Rust for the bindings; pkg-config for
# the SDK check; Open MPI for the MPI example.
test_packages=(
    "${example_packages[@]}"
    catch2 libbenchmark-dev pkg-config
    ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd
    libamdhip64-dev libze-dev libze1
    clang llvm-spirv-14 spirv-tools hipcc libfuzzer-14-dev libclang-rt-14-dev
    python3 python3-venv python3-setuptools python3-pip python3-pytest python3-numpy
    cargo rustc
    libopenmpi-dev openmpi-bin
)
# Interop clients the Python tests use when present, the profilers docs/benchmarks.md uses, and
# matplotlib for `tools/polyhal-trace plot` (the example.trace test draws a picture when present).
# PyPI wheels of the test profile, pinned (install_python_packages below).
python_packages=(intel-opencl-rt==2026.2.0 intel-cmplr-lib-rt==2026.2.0)
# The all profile adds dpctl (Intel's SYCL runtime), the peer of tools/bench/peer_sycl.py.
[[ ${1:-} == all || ${2:-} == all ]] && python_packages+=(dpctl==0.22.1)
# PyPI's Linux wheel of torch is its CUDA build (about 5 GiB with NVIDIA's libraries); the
# interop tests use its CPU side only.
torch_package=torch==2.15.0
all_packages=("${test_packages[@]}" python3-torch python3-pyopencl linux-perf valgrind
              python3-matplotlib)

usage() {
    sed -n '4,7p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

list_only=0
if [[ ${1:-} == --list ]]; then
    list_only=1
    shift
fi
profile=${1:-test}
[[ $# -le 1 ]] || usage
case ${profile} in
    example) packages=("${example_packages[@]}") ;;
    test) packages=("${test_packages[@]}") ;;
    all) packages=("${all_packages[@]}") ;;
    *) usage ;;
esac
if ((list_only)); then
    printf '%s\n' "${packages[@]}"
    [[ ${profile} == example ]] || printf 'pypi:%s\n' "${python_packages[@]}" "${torch_package}"
    exit 0
fi

missing=()
for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Abbrev}' "${package}" 2>/dev/null || true)
    [[ ${status} == ii* ]] || missing+=("${package}")
done

if ((${#missing[@]})); then
    echo "install-deps: installing ${#missing[@]} Debian package(s): ${missing[*]}"
    as_root=()
    if [[ $(id -u) -ne 0 ]]; then
        if ! command -v sudo >/dev/null; then
            echo "install-deps: not root and no sudo; as root, run:" >&2
            echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
            exit 1
        fi
        as_root=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    echo "install-deps: installed ${missing[*]}"
fi

# Installs python_packages into build/python-deps (again only when the pinned list changed) and
# writes the ICD folder that adds Intel's OpenCL runtime to the drivers in /etc/OpenCL/vendors.
install_python_packages() {
    local root venv stamp vendors runtime
    root=$(cd "$(dirname "$0")/.." && pwd)/build/python-deps
    venv=${root}/venv
    stamp=${venv}/polyhal-packages
    if [[ ! -f ${stamp} || $(<"${stamp}") != "${python_packages[*]}" ]]; then
        echo "install-deps: installing from PyPI into ${venv}: ${python_packages[*]}"
        rm -rf "${venv}"
        /usr/bin/python3 -m venv "${venv}"
        "${venv}/bin/python" -m pip install --quiet --disable-pip-version-check \
            --root-user-action=ignore "${python_packages[@]}"
        echo "${python_packages[*]}" >"${stamp}"
    fi
    runtime=${venv}/lib/libintelocl.so
    [[ -e ${runtime} ]] || { echo "install-deps: ${runtime} is missing" >&2; exit 1; }
    vendors=${root}/opencl-vendors
    rm -rf "${vendors}"
    mkdir -p "${vendors}"
    # The wheel's own intel-cpu.icd names a path of Intel's build machine, not this one.
    echo "${runtime}" >"${vendors}/intel-cpu.icd"
    cp /etc/OpenCL/vendors/*.icd "${vendors}/"
}

# Installs torch_package into build/python-deps/torch (again only when the pin changed).
install_torch() {
    local venv stamp
    venv=$(cd "$(dirname "$0")/.." && pwd)/build/python-deps/torch
    stamp=${venv}/polyhal-packages
    [[ -f ${stamp} && $(<"${stamp}") == "${torch_package}" ]] && return
    echo "install-deps: installing from PyPI into ${venv}: ${torch_package}"
    rm -rf "${venv}"
    /usr/bin/python3 -m venv --system-site-packages "${venv}"
    "${venv}/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir \
        --root-user-action=ignore "${torch_package}"
    echo "${torch_package}" >"${stamp}"
}

if [[ ${profile} != example ]]; then
    install_python_packages
    install_torch
    found_cuda=
    for root in "${CUDA_PATH:-}" "${CUDA_HOME:-}" /usr/local/cuda; do
        if [[ -n ${root} && -e ${root}/include/cuda.h ]]; then
            found_cuda=${root}
            break
        fi
    done
    if [[ -z ${found_cuda} ]]; then
        echo "install-deps: the CUDA toolkit (cuda.h, nvcc) was not found at /usr/local/cuda," \
             "\$CUDA_PATH or \$CUDA_HOME. It is not a Debian package: install NVIDIA's CUDA" \
             "toolkit, which the test build needs for the cuda backend and its kernels." >&2
        exit 1
    fi
fi
echo "install-deps: the ${profile} packages are installed"
