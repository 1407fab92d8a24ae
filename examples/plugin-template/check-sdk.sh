#!/usr/bin/env bash
# check-sdk.sh <build-dir>: proves polyhal's SDK from its install tree, the way a vendor uses it.
#
#   1. installs <build-dir> into <build-dir>/sdk
#   2. builds this plugin template out of tree against <build-dir>/sdk (CMake package)
#   3. checks that the plugin exports only the entry symbol
#   4. runs the installed polyhal-cts, kernels included (the template's own image kind), and
#      halinfo on the template plugin
#   5. installs the template into the SDK: automatic selection must choose it, and the installed
#      polyhal-cts must find its kernel images
#   6. compiles and runs a C program against the SDK through pkg-config
#
# Nothing comes from the build tree but what `cmake --install` copied; LD_LIBRARY_PATH is cleared,
# so the installed programs must find libpolyhal.so through their RPATH. Exits non-zero on the
# first failure.
set -euo pipefail

if [[ $# -ne 1 || ! -d $1 ]]; then
    echo "usage: $0 <polyhal build dir>" >&2
    exit 2
fi
build=$(cd "$1" && pwd -P)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
sdk=$build/sdk
plugin_build=$build/plugin-template
unset LD_LIBRARY_PATH

step() { printf '\n== check-sdk: %s\n' "$*"; }
die() {
    printf 'check-sdk: FAILED: %s\n' "$*" >&2
    exit 1
}

step "install $build into $sdk"
rm -rf "$sdk"
cmake --install "$build" --prefix "$sdk" >/dev/null || die "cmake --install failed"
for file in include/polyhal/hal.h include/polyhal/plugin.h include/polyhal/plugin_support.hpp \
            bin/polyhal-cts bin/halinfo; do
    [[ -e $sdk/$file ]] || die "the SDK lacks $file"
done

step "build the plugin template out of tree against the SDK"
rm -rf "$plugin_build"
cmake -S "$here" -B "$plugin_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_PREFIX_PATH="$sdk" || die "configuring the template failed"
cmake --build "$plugin_build" || die "building the template failed"
package_dir=$(sed -n 's/^polyhal_DIR:PATH=//p' "$plugin_build/CMakeCache.txt")
[[ $package_dir == "$sdk"/* ]] || die "find_package(polyhal) used '$package_dir', not the SDK"
plugin=$plugin_build/libpolyhal_template.so
[[ -f $plugin ]] || die "$plugin was not built"
echo "built $plugin with the package in $package_dir"

step "the plugin exports only halPluginGetDispatchTable"
exports=$(nm -D --defined-only "$plugin" | awk '{ print $NF }') || die "nm cannot read $plugin"
echo "$exports"
[[ $exports == halPluginGetDispatchTable ]] || die "the plugin exports more: ${exports//$'\n'/ }"

step "the installed programs find the SDK's libpolyhal.so by themselves"
for program in polyhal-cts halinfo; do
    resolved=$(ldd "$sdk/bin/$program" | awk '$1 ~ /^libpolyhal\.so/ && $3 ~ /^\// { print $3 }')
    echo "$program -> ${resolved:-not found}"
    [[ -n $resolved && $(readlink -f "$resolved") == "$sdk"/* ]] ||
        die "$program does not find the SDK's libpolyhal.so (its install RPATH should be \$ORIGIN/../lib)"
done

# Runs the installed polyhal-cts with the given arguments; fails when it fails, or when it skipped
# a kernel test for want of the template's kernels (the suite passes a backend without them).
run_cts() {
    local log=$plugin_build/cts.log
    "$sdk/bin/polyhal-cts" "$@" 2>&1 | tee "$log" | tail -n 3
    [[ ${PIPESTATUS[0]} -eq 0 ]] || die "the conformance suite failed on the template (log: $log)"
    if grep -Eq "lacks HAL_DEVICE_CAP_KERNELS|no CTS kernel image" "$log"; then
        die "the conformance suite skipped kernel tests on the template (log: $log)"
    fi
}

step "installed polyhal-cts with POLYHAL_BACKEND=$plugin, its kernels from the plugin's build"
POLYHAL_BACKEND=$plugin POLYHAL_CTS_KERNEL_DIR=$plugin_build/cts-kernels run_cts

step "installed halinfo with POLYHAL_BACKEND=$plugin"
info=$(POLYHAL_BACKEND=$plugin "$sdk/bin/halinfo" 2>&1) || die "halinfo failed: $info"
echo "$info"
grep -q "template" <<<"$info" || die "halinfo does not list the template backend"

step "installed into the SDK, the template is chosen automatically and its kernels are found"
plugin_dir=$(dirname "$(find "$sdk" -name libpolyhal_cpu.so -print -quit)")
[[ -d $plugin_dir ]] || die "the SDK has no plugin folder (libpolyhal_cpu.so not found)"
cmake --install "$plugin_build" --prefix "$sdk" || die "installing the template failed"
manifest=$plugin_build/install_manifest.txt
trap 'xargs rm -f <"$manifest"' EXIT
grep -qx "$plugin_dir/libpolyhal_template.so" "$manifest" ||
    die "the template was not installed into the SDK's plugin folder $plugin_dir"
info=$(env -u POLYHAL_BACKEND "$sdk/bin/halinfo" 2>&1) || die "halinfo failed: $info"
echo "$info"
grep -Eq "^  backend +template " <<<"$info" ||
    die "with POLYHAL_BACKEND unset, polyhal did not choose the installed template plugin"
(unset POLYHAL_BACKEND POLYHAL_CTS_KERNEL_DIR && run_cts "[stream],[kernel]")
xargs rm -f <"$manifest"
trap - EXIT

step "a C program built with pkg-config against the SDK"
pc_file=$(find "$sdk" -name polyhal.pc -print -quit)
[[ -n $pc_file ]] || die "the SDK has no polyhal.pc"
export PKG_CONFIG_PATH=${pc_file%/*}
flags=$(pkg-config --cflags --libs polyhal) || die "pkg-config does not know polyhal"
libdir=$(pkg-config --variable=libdir polyhal)
echo "pkg-config --cflags --libs polyhal: $flags"
[[ -d $libdir && $(cd "$libdir" && pwd -P) == "$sdk"/* ]] ||
    die "polyhal.pc points to '$libdir', not into the SDK (is its prefix relocatable?)"
check_dir=$plugin_build/pkg-config-check
mkdir -p "$check_dir"
cat >"$check_dir/main.c" <<'C'
/* Initialises polyhal, names the backend and copies bytes through device memory. */
#include <polyhal/hal.h>

#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        halError status_ = (call);                                                       \
        if (status_ != HAL_SUCCESS) {                                                    \
            fprintf(stderr, "%s: %s: %s\n", #call, halGetErrorName(status_),             \
                    halGetLastErrorMessage());                                           \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

int main(void) {
    int major = -1, minor = -1, patch = -1;
    const char* backend = NULL;
    const char in[] = "through the device", *message = "ok";
    char out[sizeof in] = {0};
    void* device = NULL;
    CHECK(halGetVersion(&major, &minor, &patch));
    CHECK(halGetBackendName(&backend));
    CHECK(halMalloc(&device, sizeof in));
    CHECK(halMemcpy(device, sizeof in, in, sizeof in, HAL_MEMCPY_HOST_TO_DEVICE));
    CHECK(halMemcpy(out, sizeof out, device, sizeof in, HAL_MEMCPY_DEVICE_TO_HOST));
    CHECK(halFree(device));
    if (major != HAL_VERSION_MAJOR || minor != HAL_VERSION_MINOR) message = "version mismatch";
    if (memcmp(in, out, sizeof in) != 0) message = "copy mismatch";
    printf("polyhal %d.%d.%d, backend %s: %s\n", major, minor, patch, backend, message);
    return strcmp(message, "ok") == 0 ? 0 : 1;
}
C
# pkg-config gives no RPATH; a program linked against a private prefix adds its own.
read -ra flag_words <<<"$flags"
cc -std=c99 -pedantic -Wall -Wextra -Werror "$check_dir/main.c" -o "$check_dir/main" "${flag_words[@]}" \
   -Wl,-rpath,"$libdir" || die "compiling against the SDK through pkg-config failed"
POLYHAL_BACKEND=$plugin "$check_dir/main" || die "the pkg-config program failed"

step "passed: install tree, out-of-tree plugin, exports, polyhal-cts with kernels, halinfo, automatic selection, pkg-config"
