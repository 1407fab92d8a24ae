// What a HIP module image declares about its kernels, read the way the HIP runtime reads it: a
// clang offload bundle holds one code object (an AMDGPU ELF image) per GPU architecture, and a
// code object's metadata note lists its kernels with their arguments, which the ROCm Code Object
// Manager (comgr) decodes (clr: rocclr/device/devprogram.cpp, getKernelMetadata). HIP has no
// counterpart of cuFuncGetParamInfo, so the plugin checks launch arguments against this; the HIP
// double loads its images with it.
#ifndef POLYHAL_BACKENDS_HIP_CODE_OBJECT_HPP_
#define POLYHAL_BACKENDS_HIP_CODE_OBJECT_HPP_

// ROCm 6 and later put comgr's header in a folder of its own; Debian and ROCm 5 do not.
#if __has_include(<amd_comgr/amd_comgr.h>)
#include <amd_comgr/amd_comgr.h>
#else
#include <amd_comgr.h>
#endif

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "plugin_common/symbol_table.hpp"

// clang-format off
#define POLYHAL_COMGR_SYMBOLS(X, X_OR, OPTIONAL, OPTIONAL_OR)            \
    X(createData,          amd_comgr_create_data)                        \
    X(releaseData,         amd_comgr_release_data)                       \
    X(setData,             amd_comgr_set_data)                           \
    X(getDataMetadata,     amd_comgr_get_data_metadata)                  \
    X(destroyMetadata,     amd_comgr_destroy_metadata)                   \
    X(metadataLookup,      amd_comgr_metadata_lookup)                    \
    X(getMetadataString,   amd_comgr_get_metadata_string)                \
    X(getMetadataListSize, amd_comgr_get_metadata_list_size)             \
    X(indexListMetadata,   amd_comgr_index_list_metadata)
// clang-format on

namespace polyhal::hip {

// The comgr functions reading a code object calls.
struct ComgrSymbols {
    POLYHAL_DEFINE_SYMBOLS(POLYHAL_COMGR_SYMBOLS)
};

// comgr's library: ROCm 7 (comgr 3), then ROCm 5 and 6 (comgr 2).
inline constexpr const char* kComgrLibraries[] = {"libamd_comgr.so.3", "libamd_comgr.so.2"};

// A clang offload bundle's entry: its target ("hipv4-amdgcn-amd-amdhsa--gfx90a", say) and bytes.
struct BundleEntry {
    std::string_view target;
    const unsigned char* image;
    uint64_t size;
};

// Whether `image` starts with the magic of an (uncompressed) clang offload bundle.
bool isOffloadBundle(const unsigned char* image, size_t size) noexcept;

// The entries of the offload bundle `image` into `entries`, or what runs past its end.
const char* readOffloadBundle(const unsigned char* image, size_t size,
                              std::vector<BundleEntry>* entries);

// One explicit parameter of a kernel (the metadata's hidden arguments are the runtime's own).
struct KernelParameter {
    size_t size;
    bool isPointer;  // a global buffer: a device address the kernel dereferences
};
using KernelParameters = std::unordered_map<std::string, std::vector<KernelParameter>>;

// The kernels of the code object `codeObject` with the parameters each declares, from its
// metadata (code object v3 and later: amdhsa.kernels). Returns comgr's status: not
// AMD_COMGR_STATUS_SUCCESS for an image that is not a code object, or has no such metadata.
amd_comgr_status_t readKernelParameters(const ComgrSymbols& comgr, const unsigned char* codeObject,
                                        size_t size, KernelParameters* kernels);

}  // namespace polyhal::hip

#endif  // POLYHAL_BACKENDS_HIP_CODE_OBJECT_HPP_
